//! Decode + resample throughput for one minute of audio, and voice detection on a minute of
//! the corpus's real recordings and on ten minutes of digital silence.
//!
//! Inputs are generated at start-up into a temporary folder: a 60 s, 44.1 kHz stereo 16-bit
//! WAV (written with hound) and, when `ffmpeg` is on the PATH, the same audio encoded to a
//! 128 kb/s MP3. Throughput is reported in seconds of audio per second, i.e. "x real time"
//! (criterion prints it as `elem/s`). Everything runs on the calling thread, so the numbers
//! are single-core figures.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use verbatim::audio::decode::decode_file;
use verbatim::audio::resample::resample_to_16k;
use verbatim::audio::vad::frame_scores;

const SECONDS: u32 = 60;
const RATE: u32 = 44_100;

/// Speech-band test signal: a few harmonics with a slow amplitude envelope plus a little
/// noise, different in each channel.
fn write_wav(path: &Path) {
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::create(path, spec).unwrap();
    let mut noise = 0x2545_F491_4F6C_DD1Du64;
    let two_pi = 2.0 * std::f32::consts::PI;
    for i in 0..SECONDS * RATE {
        let t = i as f32 / RATE as f32;
        let envelope = 0.5 + 0.5 * (two_pi * 3.0 * t).sin();
        noise ^= noise << 13;
        noise ^= noise >> 7;
        noise ^= noise << 17;
        let n = (noise >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let voice = |f0: f32| {
            (1..=5)
                .map(|k| (two_pi * f0 * k as f32 * t).sin() / k as f32)
                .sum::<f32>()
        };
        let left = 0.2 * envelope * voice(140.0) + 0.02 * n;
        let right = 0.2 * envelope * voice(220.0) - 0.02 * n;
        writer.write_sample((left * 32767.0) as i16).unwrap();
        writer.write_sample((right * 32767.0) as i16).unwrap();
    }
    writer.finalize().unwrap();
}

fn encode_mp3(wav: &Path, mp3: &Path) -> bool {
    Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y", "-i"])
        .arg(wav)
        .args(["-c:a", "libmp3lame", "-b:a", "128k"])
        .arg(mp3)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

struct Inputs {
    _dir: tempfile::TempDir,
    wav: PathBuf,
    mp3: Option<PathBuf>,
}

fn inputs() -> Inputs {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("bench_60s_44k1_stereo.wav");
    write_wav(&wav);
    let mp3 = dir.path().join("bench_60s_44k1_stereo.mp3");
    let mp3 = if encode_mp3(&wav, &mp3) {
        Some(mp3)
    } else {
        eprintln!("ffmpeg with libmp3lame is not available: skipping the MP3 benchmark");
        None
    };
    Inputs {
        _dir: dir,
        wav,
        mp3,
    }
}

/// CPU time consumed by the calling thread so far (Linux: first field of schedstat, in ns).
/// `None` where unavailable. On a busy machine this is the fairer single-core figure, as it
/// excludes time spent waiting for the CPU.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// `len` samples of the corpus's real recordings (16 kHz mono), one after another.
fn real_speech(len: usize) -> Vec<f32> {
    let clips = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&clips)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("real-") && n != "real-noise.wav")
        })
        .collect();
    files.sort();
    let mut speech = Vec::with_capacity(len);
    for file in files.iter().cycle() {
        let mut reader = hound::WavReader::open(file).unwrap();
        assert_eq!(reader.spec().sample_rate, 16_000, "{}", file.display());
        for sample in reader.samples::<i16>() {
            if speech.len() == len {
                return speech;
            }
            speech.push(f32::from(sample.unwrap()) / 32_768.0);
        }
    }
    unreachable!("the corpus has real recordings")
}

/// A quick median-of-N timing, printed as "x real time" before criterion's own report, with
/// the thread's CPU time beside the wall-clock time.
fn report_realtime(label: &str, seconds: u32, mut run: impl FnMut()) {
    run(); // warm up
    let mut wall: Vec<Duration> = Vec::new();
    let mut cpu: Vec<Duration> = Vec::new();
    for _ in 0..9 {
        let cpu_start = thread_cpu_time();
        let start = Instant::now();
        run();
        wall.push(start.elapsed());
        if let (Some(a), Some(b)) = (cpu_start, thread_cpu_time()) {
            cpu.push(b - a);
        }
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let wall = median(&mut wall);
    let realtime = |d: Duration| f64::from(seconds) / d.as_secs_f64();
    let cpu_part = if cpu.is_empty() {
        String::new()
    } else {
        let cpu = median(&mut cpu);
        format!(
            "; CPU {:.1} ms = {:.0}x real time per CPU core",
            cpu.as_secs_f64() * 1e3,
            realtime(cpu)
        )
    };
    eprintln!(
        "{label}: {seconds} s of audio, median of 9: wall {:.1} ms = {:.0}x real time{cpu_part}",
        wall.as_secs_f64() * 1e3,
        realtime(wall),
    );
}

fn bench(c: &mut Criterion) {
    let inputs = inputs();

    let mut group = c.benchmark_group("decode_to_16k_mono");
    // Throughput in seconds of audio: criterion's elem/s is then "x real time".
    group.throughput(Throughput::Elements(u64::from(SECONDS)));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));

    let wav = inputs.wav.clone();
    report_realtime("WAV 44.1 kHz stereo s16", SECONDS, || {
        decode_file(&wav, Some("wav")).unwrap();
    });
    group.bench_function("wav_60s_44k1_stereo", |b| {
        b.iter(|| decode_file(&wav, Some("wav")).unwrap())
    });

    if let Some(mp3) = inputs.mp3.clone() {
        report_realtime("MP3 44.1 kHz stereo 128 kb/s", SECONDS, || {
            decode_file(&mp3, Some("mp3")).unwrap();
        });
        group.bench_function("mp3_60s_44k1_stereo", |b| {
            b.iter(|| decode_file(&mp3, Some("mp3")).unwrap())
        });
    }

    // Resampling alone, for locating the cost.
    let mono: Vec<f32> = (0..SECONDS * RATE)
        .map(|i| (i as f32 * 0.0627).sin() * 0.3)
        .collect();
    report_realtime("resample only, 44.1 kHz mono", SECONDS, || {
        std::hint::black_box(resample_to_16k(&mono, RATE));
    });
    group.bench_function("resample_only_60s_44k1_mono", |b| {
        b.iter(|| resample_to_16k(std::hint::black_box(&mono), RATE))
    });
    group.finish();

    // Voice detection scores every 16 ms frame; on a repeated frame (silence) it stops running
    // its network once its state no longer changes.
    let mut group = c.benchmark_group("voice_detection");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    let speech = real_speech(SECONDS as usize * 16_000);
    report_realtime("voice detection, 60 s of real speech", SECONDS, || {
        std::hint::black_box(frame_scores(&speech));
    });
    group.throughput(Throughput::Elements(u64::from(SECONDS)));
    group.bench_function("real_speech_60s_16k", |b| {
        b.iter(|| frame_scores(std::hint::black_box(&speech)))
    });
    let silence = vec![0f32; 10 * SECONDS as usize * 16_000];
    report_realtime(
        "voice detection, 600 s of digital silence",
        10 * SECONDS,
        || {
            std::hint::black_box(frame_scores(&silence));
        },
    );
    group.throughput(Throughput::Elements(10 * u64::from(SECONDS)));
    group.bench_function("silence_600s_16k", |b| {
        b.iter(|| frame_scores(std::hint::black_box(&silence)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
