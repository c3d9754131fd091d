//! How long each stretch of sound takes to prove itself speech to the voice activity detection,
//! for several scores a frame must reach to count as confident (files use 0.9, live audio 0.85;
//! a region is speech once 15 of its frames are voiced and 8 confident, or once its loudness
//! spreads like syllables, whatever the score).
//!
//! ```text
//! cargo run --release --example vad_proof -- [--lead FILE] [--confident 0.9,0.85,0.8] FILE...
//! ```
//!
//! For every region of every FILE (any format the server reads) prints its start and length and,
//! for each confidence score, the seconds from its start until it proved itself speech ("-":
//! never); then per score the median, p90 and longest of those times and how many regions proved
//! themselves. `--lead FILE` plays that audio and a second of silence before each FILE (the
//! detector's scores depend on what it heard before) and leaves its own regions out: noise right
//! after speech.

use std::path::Path;

use verbatim::audio::decode;
use verbatim::audio::vad::{FRAME, Frame, RegionTracker, SAMPLE_RATE, frame_scores};

/// A frame scoring at least this opens a region and counts as voiced (the default threshold).
const ENTER: f32 = 0.5;
/// A region with fewer voiced frames is not a word (the detection's own rule).
const MIN_VOICED_FRAMES: usize = 15;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut value = |name: &str| {
        let i = args.iter().position(|a| a == name)?;
        args.remove(i);
        Some(args.remove(i))
    };
    let lead = value("--lead").map(|path| load(&path));
    let scores: Vec<f32> = value("--confident")
        .unwrap_or_else(|| "0.9,0.85,0.8".into())
        .split(',')
        .map(|s| s.parse().expect("a score between 0 and 1"))
        .collect();
    if args.is_empty() {
        eprintln!("usage: vad_proof [--lead FILE] [--confident 0.9,0.85,0.8] FILE...");
        std::process::exit(2);
    }
    let seconds = |frames: usize| frames as f64 * FRAME as f64 / SAMPLE_RATE as f64;
    print!("{:>8} {:>7}", "start", "length");
    for score in &scores {
        print!(" {:>7}", format!("8@{score}"));
    }
    println!();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); scores.len()];
    let mut regions = 0;
    for path in &args {
        let mut samples = lead.clone().unwrap_or_default();
        if lead.is_some() {
            samples.extend(std::iter::repeat_n(0.0, SAMPLE_RATE));
        }
        let skip = samples.len() / FRAME;
        samples.extend(load(path));
        println!("# {path}");
        for region in proofs(&frame_scores(&samples), &scores) {
            if region.start < skip {
                continue;
            }
            regions += 1;
            print!(
                "{:8.2} {:7.2}",
                seconds(region.start - skip),
                seconds(region.length)
            );
            for (i, proved) in region.proved_after.iter().enumerate() {
                match proved {
                    Some(frames) => {
                        times[i].push(seconds(*frames));
                        print!(" {:7.2}", seconds(*frames));
                    }
                    None => print!(" {:>7}", "-"),
                }
            }
            println!();
        }
    }
    println!("# proved itself speech after (median / p90 / longest), of {regions} regions");
    for (score, times) in scores.iter().zip(&mut times) {
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
        if times.is_empty() {
            println!("8@{score}: none");
        } else {
            println!(
                "8@{score}: {:.2} / {:.2} / {:.2} s, {} proved",
                at(0.5),
                at(0.9),
                times[times.len() - 1],
                times.len()
            );
        }
    }
}

/// A region of voiced frames, and after how many of its frames it proved itself speech with
/// each confidence score (None: never).
struct Region {
    start: usize,
    length: usize,
    voiced: usize,
    proved_after: Vec<Option<usize>>,
}

impl Region {
    fn is_word(&self) -> bool {
        self.voiced >= MIN_VOICED_FRAMES
    }
}

/// The regions of `frames`, with one tracker per confidence score: they open and close the same
/// regions, and differ only in when they call one speech (by its confident frames, or by how
/// its loudness spreads, which is the same for every score).
fn proofs(frames: &[Frame], scores: &[f32]) -> Vec<Region> {
    let mut trackers: Vec<RegionTracker> = scores
        .iter()
        .map(|&score| RegionTracker::with_threshold(ENTER).confident_from(score))
        .collect();
    let mut regions = Vec::new();
    let mut open: Option<Region> = None;
    for (i, &frame) in frames.iter().enumerate() {
        for tracker in &mut trackers {
            tracker.push(i, frame);
        }
        let Some((range, _)) = trackers[0].open() else {
            regions.extend(open.take().filter(Region::is_word));
            continue;
        };
        if open.as_ref().is_none_or(|r| r.start != range.start) {
            regions.extend(open.take().filter(Region::is_word));
            open = Some(Region {
                start: range.start,
                length: 0,
                voiced: 0,
                proved_after: vec![None; scores.len()],
            });
        }
        let region = open.as_mut().expect("just opened");
        region.length = range.len();
        region.voiced += usize::from(frame.score >= ENTER);
        for (proved, tracker) in region.proved_after.iter_mut().zip(&trackers) {
            if proved.is_none() && tracker.open().is_some_and(|(_, speech)| speech) {
                *proved = Some(i + 1 - region.start);
            }
        }
    }
    regions.extend(open.filter(Region::is_word));
    regions
}

fn load(path: &str) -> Vec<f32> {
    decode::decode_file(Path::new(path), None)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .samples
}
