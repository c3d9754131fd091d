//! A WAV file written as audio arrives: 16-bit PCM under a temporary name in the target folder,
//! renamed into place when finished. Never holds the recording in memory. A file left behind by
//! a crash can have its header repaired ([`repair_header`]) so the captured audio is kept.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// An open recording.
pub struct WavSink {
    writer: hound::WavWriter<BufWriter<File>>,
    temp: PathBuf,
    target: PathBuf,
    channels: u16,
    frames: u64,
}

impl WavSink {
    /// Starts `target` (written as `.<name>.part` beside it until [`WavSink::finish`]).
    pub fn create(target: &Path, sample_rate: u32, channels: u16) -> io::Result<WavSink> {
        let temp = temp_path(target);
        let spec = hound::WavSpec {
            channels,
            sample_rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let writer = hound::WavWriter::create(&temp, spec).map_err(hound_io)?;
        Ok(WavSink {
            writer,
            temp,
            target: target.to_path_buf(),
            channels,
            frames: 0,
        })
    }

    /// The temporary file being written.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Appends interleaved samples in [-1, 1].
    pub fn write(&mut self, samples: &[f32]) -> io::Result<()> {
        for s in samples {
            let value = (s.clamp(-1.0, 1.0) * i16::MAX as f32).round() as i16;
            self.writer.write_sample(value).map_err(hound_io)?;
        }
        self.frames += (samples.len() / self.channels.max(1) as usize) as u64;
        Ok(())
    }

    /// Seconds written so far.
    pub fn seconds(&self) -> f64 {
        self.frames as f64 / self.writer.spec().sample_rate as f64
    }

    /// Completes the header, syncs and renames the file into place; returns its path.
    pub fn finish(self) -> io::Result<PathBuf> {
        self.writer.finalize().map_err(hound_io)?;
        File::open(&self.temp)?.sync_all()?;
        fs::rename(&self.temp, &self.target)?;
        if let Some(dir) = self.target.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(self.target)
    }
}

/// `.<name>.part` beside `target`.
pub fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("recording.wav");
    target.with_file_name(format!(".{name}.part"))
}

fn hound_io(err: hound::Error) -> io::Error {
    match err {
        hound::Error::IoError(e) => e,
        other => io::Error::other(other),
    }
}

/// Rewrites the RIFF and data sizes of a canonical 44-byte-header PCM WAV from its length on
/// disk (what an interrupted writer could not do); returns the seconds of audio it holds.
pub fn repair_header(path: &Path) -> io::Result<f64> {
    let mut file = OpenOptions::new().read(true).write(true).open(path)?;
    let mut header = [0u8; 44];
    file.read_exact(&mut header)?;
    if &header[0..4] != b"RIFF" || &header[8..12] != b"WAVE" || &header[36..40] != b"data" {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a canonical PCM WAV file",
        ));
    }
    let channels = u16::from_le_bytes([header[22], header[23]]).max(1) as u64;
    let rate = u32::from_le_bytes([header[24], header[25], header[26], header[27]]).max(1) as u64;
    let bits = u16::from_le_bytes([header[34], header[35]]).max(8) as u64;
    let frame = channels * bits / 8;
    let len = file.metadata()?.len();
    let data = (len.saturating_sub(44) / frame * frame).min(u32::MAX as u64 - 36);
    file.set_len(44 + data)?;
    file.seek(SeekFrom::Start(4))?;
    file.write_all(&((36 + data) as u32).to_le_bytes())?;
    file.seek(SeekFrom::Start(40))?;
    file.write_all(&(data as u32).to_le_bytes())?;
    file.sync_all()?;
    Ok(data as f64 / (frame * rate) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_recording_is_renamed_into_place_and_decodes() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("rec.wav");
        let mut sink = WavSink::create(&target, 48_000, 1).unwrap();
        let tone: Vec<f32> = (0..48_000).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        sink.write(&tone).unwrap();
        assert!(
            !target.exists() && sink.temp_path().exists(),
            "written under a temporary name"
        );
        assert_eq!(sink.seconds(), 1.0);
        let path = sink.finish().unwrap();
        assert_eq!(path, target);
        assert!(!temp_path(&target).exists());
        let decoded = crate::audio::decode::decode_file(&target, Some("wav")).unwrap();
        assert!((decoded.duration_secs - 1.0).abs() < 0.01);
    }

    #[test]
    fn an_interrupted_recording_is_recovered_by_repairing_its_header() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("crashed.wav");
        let mut sink = WavSink::create(&target, 16_000, 2).unwrap();
        sink.write(&vec![0.25; 2 * 16_000 * 2]).unwrap(); // 2 s of stereo
        let temp = sink.temp_path().to_path_buf();
        // Simulate a crash: the buffered writer is flushed by the OS but never finalised.
        std::mem::forget(sink);
        let mut partial = fs::read(&temp).unwrap();
        partial.truncate(partial.len().max(44)); // whatever reached the disk
        let crashed = dir.path().join("crashed.part.wav");
        fs::write(&crashed, &partial).unwrap();
        let seconds = repair_header(&crashed).unwrap();
        let decoded = crate::audio::decode::decode_file(&crashed, Some("wav")).unwrap();
        assert!(
            (decoded.duration_secs - seconds).abs() < 0.01,
            "{seconds} vs {}",
            decoded.duration_secs
        );
        assert!(repair_header(&dir.path().join("missing.wav")).is_err());
    }
}
