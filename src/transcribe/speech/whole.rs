//! An engine that hears whole clips (the replay engine): the whole audio and its chunks in one
//! call, or on live audio the audio since what it last recognised.

use super::*;

impl Listener {
    /// Live audio on an engine that hears whole clips: hears the audio from the end of what it
    /// last recognised to the end of the chunk just settled; what it recognises is settled (a
    /// clip cut by a pause of its own is recognised with its next chunk). False once it failed.
    pub(super) fn hear_whole_so_far(&mut self) -> bool {
        let Some((whole, chunks)) = &self.whole else {
            return true;
        };
        let from = self.whole_heard;
        let to = chunks.last().map_or(from, |c| c.end).min(whole.len());
        let samples = whole[from..to].to_vec();
        let pending = since(chunks, from);
        let output = match self.call_engine(&samples, pending) {
            Ok(output) if !output.text.trim().is_empty() => output,
            Ok(_) => return true,
            Err(err) => {
                self.failed = Some(err);
                return false;
            }
        };
        self.whole_heard = to;
        self.settle_whole(output, from);
        true
    }

    /// Takes what an engine that hears whole clips recognised in the audio from sample `from`.
    pub(super) fn settle_whole(&mut self, mut output: EngineOutput, from: usize) {
        if self.language.is_none() {
            self.language = output.language.take();
        }
        self.whole_time += output.processing_time.unwrap_or(0.0);
        self.keep(output, &Timeline::starting_at(from));
    }

    /// The end of the audio for an engine that hears whole clips: one call with what it has not
    /// recognised yet (all of it, but for live audio), joined to what it recognised before.
    pub(super) fn transcribe_rest_whole(
        &mut self,
        whole: &[f32],
        chunks: Vec<Range<usize>>,
    ) -> Result<EngineOutput, EngineError> {
        let from = self.whole_heard.min(whole.len());
        if from == 0 {
            return self.transcribe_whole(whole, chunks);
        }
        let rest = since(&chunks, from);
        if !rest.is_empty() {
            let output = self.call_engine(&whole[from..], rest)?;
            self.settle_whole(output, from);
        }
        Ok(EngineOutput {
            text: self.texts.join(" "),
            language: self.language.take(),
            segments: std::mem::take(&mut self.segments),
            processing_time: Some(self.whole_time),
        })
    }

    /// One call with the whole audio and its chunks, for an engine that hears whole clips.
    pub(super) fn transcribe_whole(
        &mut self,
        samples: &[f32],
        chunks: Vec<Range<usize>>,
    ) -> Result<EngineOutput, EngineError> {
        if chunks.is_empty() {
            // Such an engine reports its own (simulated) time; no call took none.
            return Ok(EngineOutput {
                processing_time: Some(0.0),
                ..self.nothing_heard()
            });
        }
        let output = self.call_engine(samples, chunks);
        if let (Ok(output), Some(sink)) = (&output, &mut self.on_segments)
            && !output.segments.is_empty()
        {
            sink(Listened::Segments(
                &output.segments,
                output.language.as_deref(),
            ));
        }
        output
    }
}
