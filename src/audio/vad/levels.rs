//! How loud audio is, frame by frame, and how much a region's loudness spreads: speech rises
//! and falls with its syllables (tens of decibels between a vowel and the gap after it), steady
//! noise, tones and sweeps stay within a few.

use super::FRAME;

/// Frames a level covers (80 ms): short enough to fall between syllables, long enough that the
/// random ups and downs of noise average out (over one frame, brown noise spreads 7 dB).
pub const FRAMES_HEARD: usize = 5;
/// The quietest level told apart (decibels of full scale); digital silence reads as this.
const FLOOR_DB: f32 = -100.0;
/// The loudest (a full-scale square wave is 0 dB).
const CEILING_DB: f32 = 10.0;
/// Levels are counted in steps of this many decibels.
const STEP_DB: f32 = 0.25;
const STEPS: usize = ((CEILING_DB - FLOOR_DB) / STEP_DB) as usize + 1;
/// The spread is taken between these fractions of a region's levels (its quietest and loudest
/// tenth left out), so that a click or a frame of the pause before it does not count.
const LOW: f64 = 0.1;
const HIGH: f64 = 0.9;

/// The level of the last [`FRAMES_HEARD`] frames, frame by frame.
#[derive(Debug, Default)]
pub struct Loudness {
    /// Mean squares of the last frames, in a ring: `next` is where the next one goes.
    recent: [f32; FRAMES_HEARD],
    next: usize,
}

impl Loudness {
    /// Takes the next frame's samples (a short last frame counts as padded with silence);
    /// gives the level of the frames heard up to it, in decibels of full scale.
    pub fn push(&mut self, samples: &[f32]) -> f32 {
        let energy: f32 = samples
            .iter()
            .filter(|s| s.is_finite())
            .map(|s| s.clamp(-1.0, 1.0).powi(2))
            .sum();
        self.recent[self.next] = energy / FRAME as f32;
        self.next = (self.next + 1) % FRAMES_HEARD;
        let mean = self.recent.iter().sum::<f32>() / FRAMES_HEARD as f32;
        (10.0 * mean.log10()).clamp(FLOOR_DB, CEILING_DB)
    }
}

/// The levels of a region's frames, counted in steps of [`STEP_DB`].
#[derive(Debug)]
pub struct Spread {
    counts: Box<[u32; STEPS]>,
    total: u32,
}

impl Default for Spread {
    fn default() -> Spread {
        Spread {
            counts: Box::new([0; STEPS]),
            total: 0,
        }
    }
}

impl Spread {
    pub fn add(&mut self, level: f32) {
        let step = ((level.clamp(FLOOR_DB, CEILING_DB) - FLOOR_DB) / STEP_DB).round() as usize;
        self.counts[step.min(STEPS - 1)] += 1;
        self.total += 1;
    }

    /// Decibels between the region's quietest and loudest tenth; None before any level.
    pub fn decibels(&self) -> Option<f32> {
        if self.total == 0 {
            return None;
        }
        let low = self.step_at(LOW);
        let high = self.step_at(HIGH);
        Some((high - low) as f32 * STEP_DB)
    }

    /// The step at which `fraction` of the levels counted lie at or under it.
    fn step_at(&self, fraction: f64) -> usize {
        let wanted = ((fraction * self.total as f64).ceil() as u32).max(1);
        let mut seen = 0;
        for (step, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= wanted {
                return step;
            }
        }
        STEPS - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels(samples: &[f32]) -> Vec<f32> {
        let mut loudness = Loudness::default();
        samples.chunks(FRAME).map(|f| loudness.push(f)).collect()
    }

    #[test]
    fn a_steady_sound_reads_at_its_level_once_its_frames_fill_the_window() {
        let tone: Vec<f32> = (0..FRAME * 20)
            .map(|i| 0.5 * (i as f32 * 0.1).sin())
            .collect();
        let heard = levels(&tone);
        // A sine of amplitude 0.5: mean square 0.125, -9 dB.
        for level in &heard[FRAMES_HEARD..] {
            assert!((level + 9.03).abs() < 0.1, "{level}");
        }
        assert!(heard[0] < heard[FRAMES_HEARD - 1]);
        assert_eq!(levels(&[0.0; FRAME * 3]), vec![FLOOR_DB; 3]);
    }

    #[test]
    fn syllables_spread_and_a_steady_sound_does_not() {
        let mut steady = Spread::default();
        let mut syllables = Spread::default();
        for i in 0..100 {
            steady.add(-30.0 + (i % 5) as f32 * 0.2);
            syllables.add(if i % 16 < 8 { -25.0 } else { -45.0 });
        }
        assert!(steady.decibels().unwrap() < 1.0);
        assert_eq!(syllables.decibels(), Some(20.0));
        assert_eq!(Spread::default().decibels(), None);
    }

    #[test]
    fn the_quietest_and_loudest_tenth_do_not_count() {
        let mut spread = Spread::default();
        for i in 0..100 {
            // Ten clicks and nine drops in a steady sound.
            spread.add(match i % 11 {
                0 => 0.0,
                5 => -90.0,
                _ => -30.0,
            });
        }
        assert_eq!(spread.decibels(), Some(0.0));
    }
}
