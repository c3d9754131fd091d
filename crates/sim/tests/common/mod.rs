//! Code shared by the integration tests: the corpus, audio building blocks and ffmpeg round
//! trips through lossy formats.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use verbatim_sim::{Corpus, Recording, SAMPLE_RATE};

/// The corpus of the source tree, loaded once per test binary.
pub fn corpus() -> Arc<Corpus> {
    static CORPUS: OnceLock<Arc<Corpus>> = OnceLock::new();
    Arc::clone(
        CORPUS
            .get_or_init(|| Arc::new(Corpus::load(&Corpus::source_dir()).expect("corpus/ loads"))),
    )
}

/// The corpus with the fixture recording of `tiny.en` added.
pub fn corpus_with_recording() -> Arc<Corpus> {
    let mut corpus = (*corpus()).clone();
    corpus
        .insert_recording(Recording::load(&fixture("recordings/tiny.en.json")).unwrap())
        .unwrap();
    Arc::new(corpus)
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Samples of corpus clip `id`.
pub fn clip(id: &str) -> Vec<f32> {
    corpus().clip(id).expect("clip in corpus").samples.to_vec()
}

/// Ids of every speech clip.
pub fn speech_ids() -> Vec<String> {
    corpus()
        .clips()
        .iter()
        .filter(|c| c.entry.kind == verbatim_sim::ClipKind::Speech)
        .map(|c| c.id().to_owned())
        .collect()
}

pub fn silence(seconds: f64) -> Vec<f32> {
    vec![0.0; (seconds * f64::from(SAMPLE_RATE)) as usize]
}

pub fn tone(hz: f64, seconds: f64) -> Vec<f32> {
    (0..(seconds * f64::from(SAMPLE_RATE)) as usize)
        .map(|i| {
            0.3 * (std::f64::consts::TAU * hz * i as f64 / f64::from(SAMPLE_RATE)).sin() as f32
        })
        .collect()
}

/// Deterministic white noise (xorshift), peak `volume`.
pub fn noise(seconds: f64, volume: f32, seed: u64) -> Vec<f32> {
    let mut state = seed | 1;
    (0..(seconds * f64::from(SAMPLE_RATE)) as usize)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            volume * ((state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0)
        })
        .collect()
}

/// `parts` one after another.
pub fn concat(parts: &[&[f32]]) -> Vec<f32> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

pub fn write_wav(path: &Path, samples: &[f32], rate: u32, channels: u16) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::create(path, spec).unwrap();
    for &s in samples {
        writer
            .write_sample((s.clamp(-1.0, 1.0) * 32767.0).round() as i16)
            .unwrap();
    }
    writer.finalize().unwrap();
}

/// Reads any 16-bit WAV: (interleaved samples, rate, channels).
pub fn read_wav(path: &Path) -> (Vec<f32>, u32, u16) {
    let reader = hound::WavReader::open(path).unwrap();
    let spec = reader.spec();
    let samples = reader
        .into_samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect();
    (samples, spec.sample_rate, spec.channels)
}

pub fn ffmpeg_available() -> bool {
    Command::new("ffmpeg")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn ffmpeg(args: &[&str]) {
    let out = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y"])
        .args(args)
        .output()
        .expect("ffmpeg runs");
    assert!(
        out.status.success(),
        "ffmpeg {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A lossy or lossless format of a round trip: file extension and ffmpeg codec options.
pub struct Format {
    pub ext: &'static str,
    pub codec: &'static [&'static str],
}

pub const MP3: Format = Format {
    ext: "mp3",
    codec: &["-c:a", "libmp3lame", "-b:a", "64k"],
};
pub const OGG: Format = Format {
    ext: "ogg",
    codec: &["-c:a", "libvorbis", "-q:a", "1"],
};
pub const FLAC: Format = Format {
    ext: "flac",
    codec: &["-c:a", "flac"],
};

/// Encodes 16 kHz mono `samples` as 44.1 kHz stereo `format` in `dir`; returns the file.
pub fn encode(dir: &Path, name: &str, samples: &[f32], format: &Format) -> PathBuf {
    encode_all(dir, &[(name, samples)], format).remove(0)
}

/// Encodes each named clip as [`encode`] does, in one ffmpeg run: every input has an output
/// of its own, encoded as if alone (starting ffmpeg costs more than encoding a short clip).
pub fn encode_all(dir: &Path, clips: &[(&str, &[f32])], format: &Format) -> Vec<PathBuf> {
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for (name, samples) in clips {
        let wav = dir.join(format!("{name}.wav"));
        write_wav(&wav, samples, SAMPLE_RATE, 1);
        inputs.push(wav);
        outputs.push(dir.join(format!("{name}.{}", format.ext)));
    }
    let mut output_options = vec!["-ar", "44100", "-ac", "2"];
    output_options.extend_from_slice(format.codec);
    ffmpeg_each(&inputs, &outputs, &output_options);
    outputs
}

/// Runs one ffmpeg that turns `inputs[i]` into `outputs[i]` with `options`, each on its own.
fn ffmpeg_each(inputs: &[PathBuf], outputs: &[PathBuf], options: &[&str]) {
    let maps: Vec<String> = (0..inputs.len()).map(|n| format!("{n}:a")).collect();
    let mut args = Vec::new();
    for input in inputs {
        args.extend(["-i", input.to_str().unwrap()]);
    }
    for (map, output) in maps.iter().zip(outputs) {
        args.extend(["-map", map.as_str()]);
        args.extend_from_slice(options);
        args.push(output.to_str().unwrap());
    }
    ffmpeg(&args);
}

/// Decodes `file` with ffmpeg to 16 kHz mono (ffmpeg resamples and downmixes).
pub fn decode_16k_mono(file: &Path) -> Vec<f32> {
    decode_all_16k_mono(&[file.to_path_buf()]).remove(0)
}

/// [`decode_16k_mono`] of every file, in one ffmpeg run.
pub fn decode_all_16k_mono(files: &[PathBuf]) -> Vec<Vec<f32>> {
    let wavs: Vec<PathBuf> = files.iter().map(|f| f.with_extension("back.wav")).collect();
    ffmpeg_each(
        files,
        &wavs,
        &["-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le"],
    );
    wavs.iter()
        .map(|wav| {
            let (samples, rate, channels) = read_wav(wav);
            assert_eq!((rate, channels), (16_000, 1));
            samples
        })
        .collect()
}

/// Decodes each file with ffmpeg at its own rate and channel count (one ffmpeg run), then
/// downmixes and resamples to 16 kHz here (averaging channels, linear interpolation): a
/// different path from ffmpeg's.
pub fn decode_all_native_then_resample(files: &[PathBuf]) -> Vec<Vec<f32>> {
    let wavs: Vec<PathBuf> = files
        .iter()
        .map(|f| f.with_extension("native.wav"))
        .collect();
    ffmpeg_each(files, &wavs, &["-c:a", "pcm_s16le"]);
    wavs.iter()
        .map(|wav| {
            let (samples, rate, channels) = read_wav(wav);
            let mono: Vec<f32> = samples
                .chunks_exact(usize::from(channels))
                .map(|frame| frame.iter().sum::<f32>() / f32::from(channels))
                .collect();
            verbatim_sim::resample_linear(&mono, rate, SAMPLE_RATE)
        })
        .collect()
}
