//! Long chunks cut: at the next pause or dip of the voice once a chunk is long enough, else at
//! its quietest moment before the longest chunk.

use std::ops::Range;

use super::*;

impl ChunkPlanner {
    /// Cuts pieces off the front of a pending chunk longer than a chunk may be, as soon as the
    /// scores around the cut are known (all of them at the `end`).
    pub(super) fn cut_long(&mut self, end: bool, chunks: &mut Vec<Range<usize>>) {
        while let Some(pending) = &self.pending
            && pending.len() > self.limits.max_chunk
            && (end || self.frames >= pending.start + self.limits.max_chunk + CUT_WINDOW_FRAMES / 2)
        {
            let cut = self.quietest_cut(pending.start);
            chunks.push(pending.start..cut);
            if let Some(pending) = &mut self.pending {
                pending.start = cut;
            }
        }
    }

    /// Where to cut a chunk starting at `start`: the quietest stretch (lowest mean score over
    /// [`CUT_WINDOW_FRAMES`]; the latest of equals) between [`EARLIEST_CUT_FRAMES`] and the
    /// longest chunk: a pause between sentences rather than between words.
    pub(super) fn quietest_cut(&self, start: usize) -> usize {
        let window = start + self.limits.earliest_cut..start + self.limits.max_chunk;
        window
            .clone()
            .map(|frame| (frame, self.quietness(frame)))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map_or(window.end, |(frame, _)| frame)
    }

    /// The sum of the scores over [`CUT_WINDOW_FRAMES`] around `frame` (as far as scored).
    pub(super) fn quietness(&self, frame: usize) -> f32 {
        let around = frame.saturating_sub(CUT_WINDOW_FRAMES / 2)
            ..(frame + CUT_WINDOW_FRAMES / 2).min(self.frames);
        around
            .filter_map(|f| self.scores.get(f.checked_sub(self.scores_from)?))
            .sum()
    }

    /// With [`Limits::cut_at_dips`]: a pending chunk that holds `close_after` frames (and
    /// `earliest_cut`) is cut at the quietest frame of a dip of the voice (the mean score of
    /// [`CUT_WINDOW_FRAMES`] under the threshold) once the voice comes back after it, even
    /// when the dip was too short to end a region: some voices never score under the region's
    /// end while they read on.
    pub(super) fn cut_at_dip(&mut self, chunks: &mut Vec<Range<usize>>) {
        let Some(pending) = self.pending.clone().filter(|_| self.limits.cut_at_dips) else {
            self.dip = None;
            return;
        };
        let Some(newest) = self.frames.checked_sub(CUT_WINDOW_FRAMES / 2) else {
            return;
        };
        let from = pending.start + self.limits.close_after.max(self.limits.earliest_cut);
        let level = self.quietness(newest);
        let voiced = self.limits.threshold * CUT_WINDOW_FRAMES as f32;
        self.dip = self
            .dip
            .filter(|&(frame, _)| pending.contains(&frame) && frame >= from);
        if newest < from || newest >= pending.end {
            return;
        }
        if level < voiced {
            if self.dip.is_none_or(|(_, lowest)| level <= lowest) {
                self.dip = Some((newest, level));
            }
        } else if let Some((cut, _)) = self.dip.take() {
            chunks.push(pending.start..cut);
            self.pending = Some(cut..pending.end);
        }
    }
}
