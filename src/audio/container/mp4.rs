//! MP4 / QuickTime: what the box scan finds (the gapless trim of each track, the truncation
//! fixes), and the file as the demuxer should see it.

mod walk;

use std::fs::File;

pub(crate) use walk::scan_mp4;

use super::ScannedSource;

/// An edit-list entry of a track, in the track's own units.
#[derive(Debug, Clone, Copy, Default)]
struct TrackEdits {
    /// Timescale of the track's media (`mdhd`).
    media_timescale: u32,
    /// Duration of the media in `media_timescale` units (`mdhd`).
    media_duration: u64,
    /// The single non-empty edit: (start in media units, duration in movie units).
    edit: Option<(u64, u64)>,
    /// Whether the edit list had a form other than a single plain edit.
    complex_edits: bool,
}

/// Frames to drop at the start of a track and how many to keep after that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trim {
    pub start: u64,
    pub keep: Option<u64>,
}

impl Trim {
    /// Drops the frames of `frames` (the next decoded frames of the track) that fall outside
    /// the trimmed range, and advances the trim state.
    pub(crate) fn apply<'a>(&mut self, frames: &'a [f32]) -> &'a [f32] {
        let skip = self.start.min(frames.len() as u64) as usize;
        self.start -= skip as u64;
        let mut kept = &frames[skip..];
        if let Some(keep) = self.keep.as_mut() {
            let n = (*keep).min(kept.len() as u64) as usize;
            *keep -= n as u64;
            kept = &kept[..n];
        }
        kept
    }
}

/// What [`scan_mp4`] found.
#[derive(Debug, Default)]
pub(crate) struct Mp4Scan {
    movie_timescale: u32,
    /// One entry per `trak`, in file order (the demuxer's track ids are these indices).
    tracks: Vec<TrackEdits>,
    /// Position of the size field of a top-level box cut short by truncation, and its length.
    truncated_box: Option<(u64, u64, bool)>,
    /// Length the demuxer should see (drops a partial box header at the end).
    visible_len: u64,
}

impl Mp4Scan {
    /// The encoder delay and padding to trim from track `track_id`, in frames at
    /// `sample_rate`. Only the gapless form of edit lists is honoured: one edit that starts
    /// at most one second into the media and ends at most one second before its end.
    pub(crate) fn trim(&self, track_id: u32, sample_rate: u32) -> Option<Trim> {
        let t = self.tracks.get(track_id as usize)?;
        let (start, duration) = t.edit?;
        if t.complex_edits || t.media_timescale == 0 || self.movie_timescale == 0 {
            return None;
        }
        let media_ts = u128::from(t.media_timescale);
        let duration_media = u128::from(duration) * media_ts / u128::from(self.movie_timescale);
        let one_second = media_ts;
        if u128::from(start) > one_second {
            return None;
        }
        let end = u128::from(start) + duration_media;
        let keep = (duration > 0
            && end <= u128::from(t.media_duration)
            && u128::from(t.media_duration) - end <= one_second)
            .then(|| (duration_media * u128::from(sample_rate) / media_ts) as u64);
        Some(Trim {
            start: (u128::from(start) * u128::from(sample_rate) / media_ts) as u64,
            keep,
        })
    }

    /// Wraps `file` so the demuxer sees the truncation fixes made by the scan.
    pub(crate) fn source(&self, file: File) -> ScannedSource {
        ScannedSource::mp4(file, self.visible_len, self.truncated_box)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gapless_trim_from_an_edit_list() {
        let scan = Mp4Scan {
            movie_timescale: 1000,
            tracks: vec![TrackEdits {
                media_timescale: 44_100,
                media_duration: 90_112,   // 88 AAC frames
                edit: Some((1024, 2000)), // skip the priming frame, keep 2 s
                complex_edits: false,
            }],
            ..Mp4Scan::default()
        };
        assert_eq!(
            scan.trim(0, 44_100),
            Some(Trim {
                start: 1024,
                keep: Some(88_200)
            })
        );
        // Other output rates scale, unknown tracks have no trim.
        assert_eq!(scan.trim(0, 22_050).unwrap().start, 512);
        assert_eq!(scan.trim(1, 44_100), None);

        // An edit that cuts deep into the media is a real edit, not gapless info: ignored.
        let mut deep = scan;
        deep.tracks[0].edit = Some((44_100 * 5, 2000));
        assert_eq!(deep.trim(0, 44_100), None);
    }

    #[test]
    fn trim_applies_across_buffers() {
        let mut trim = Trim {
            start: 3,
            keep: Some(4),
        };
        let a = [1.0, 2.0];
        let b = [3.0, 4.0, 5.0];
        let c = [6.0, 7.0, 8.0, 9.0];
        assert!(trim.apply(&a).is_empty());
        assert_eq!(trim.apply(&b), &[4.0, 5.0]);
        assert_eq!(trim.apply(&c), &[6.0, 7.0]);
        assert!(trim.apply(&c).is_empty());
    }
}
