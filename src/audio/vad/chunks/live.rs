//! What live audio asks of the planner between chunks: the samples it still needs, the open
//! chunk, whether the voice is on or has just dropped, and where the chunk would settle.

use std::ops::Range;

use super::*;

impl ChunkPlanner {
    /// The first frame a chunk not yet given out may start at: audio before it is no longer
    /// needed.
    pub fn needed_from(&self) -> usize {
        let padding = match self.keep {
            Keep::Speech { padding } => padding,
            Keep::Everything => 0,
        };
        let mut from = self.frames.saturating_sub(padding);
        if let Some(pending) = &self.pending {
            from = from.min(pending.start);
        }
        if let Some((open, _)) = self.regions.open()
            && !self.open_in_pending
        {
            from = from.min(open.start.saturating_sub(padding));
        }
        if let Some(maybe) = &self.maybe {
            from = from.min(maybe.start.saturating_sub(padding));
        }
        from
    }

    /// Where the chunk not yet given out starts (in frames) once speech has begun in it: the
    /// pending chunk, else the padded start of an open region that has proved to be speech.
    /// None between chunks (silence, or sounds not yet proved to be speech).
    pub fn open_from(&self) -> Option<usize> {
        let padding = match self.keep {
            Keep::Speech { padding } => padding,
            Keep::Everything => 0,
        };
        match (&self.pending, self.regions.open()) {
            (Some(pending), _) if !pending.is_empty() => Some(pending.start),
            (_, Some((open, true))) => Some(open.start.saturating_sub(padding)),
            _ => None,
        }
    }

    /// The chunk that settles as it is unless more speech comes (in frames): the pending chunk
    /// of speech once nobody speaks (no region open, none held in case speech follows) and its
    /// end has been scored; None while it may still grow or be cut.
    pub fn settling(&self) -> Option<Range<usize>> {
        let pending = self
            .pending
            .as_ref()
            .filter(|pending| !pending.is_empty())?;
        let quiet = matches!(self.keep, Keep::Speech { .. })
            && self.regions.open().is_none()
            && self.maybe.is_none();
        (quiet && pending.end <= self.frames && pending.len() <= self.limits.max_chunk)
            .then(|| pending.clone())
    }

    /// The pauses left out of the chunks planned so far that lie before frame `end`, taken
    /// from the planner (a pause a long chunk was cut in is parted there, its rest kept for the
    /// next chunk): the frames of a chunk ending at `end` not to hear. Empty unless
    /// [`Limits::leave_out_pauses`].
    pub fn take_gaps_before(&mut self, end: usize) -> Vec<Range<usize>> {
        let mut taken = Vec::new();
        while let Some(gap) = self.gaps.front_mut()
            && gap.start < end
        {
            if gap.end <= end {
                taken.extend(self.gaps.pop_front());
            } else {
                taken.push(gap.start..end);
                gap.start = end;
            }
        }
        taken
    }

    /// Whether a chunk after one that ended at frame `end` and starting at frame `next` follows
    /// it without a pause that ends a chunk (the first was closed by its length or cut while
    /// speech went on).
    pub fn goes_on(&self, end: usize, next: usize) -> bool {
        (end..end + self.limits.long_pause).contains(&next)
    }

    /// Someone is speaking now: a region that has proved to be speech is open.
    pub fn speaking(&self) -> bool {
        matches!(self.regions.open(), Some((_, true)))
    }

    /// Someone was speaking and the voice has dropped for [`VOICE_DROPPED_FRAMES`] or more
    /// frames: the region is still open (it closes after [`super::END_AFTER_FRAMES`]), and the
    /// speech may be over.
    pub fn voice_dropped(&self) -> bool {
        matches!(self.regions.open(), Some((open, true)) if self.frames >= open.end + VOICE_DROPPED_FRAMES)
    }

    /// Where the open chunk ends (in frames) should it settle with no more speech, while it
    /// may: once the voice has dropped ([`ChunkPlanner::voice_dropped`]), its end and the
    /// padding after it; once nobody speaks (no region open, none held in case speech follows),
    /// the pending chunk's end, its padding still to be heard or not. None while someone speaks
    /// or a sound may prove to be speech.
    pub fn settles_at_if_quiet(&self) -> Option<usize> {
        let Keep::Speech { padding } = self.keep else {
            return None;
        };
        if self.maybe.is_some() {
            return None;
        }
        let voice_end = match self.regions.open() {
            Some((open, true)) if self.voice_dropped() => Some(open.end + padding),
            Some(_) => return None,
            None => None,
        };
        let pending_end = self
            .pending
            .as_ref()
            .filter(|pending| !pending.is_empty())
            .map(|pending| pending.end);
        voice_end.into_iter().chain(pending_end).max()
    }
}
