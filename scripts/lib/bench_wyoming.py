"""The Wyoming benchmark's measuring half (scripts/bench-wyoming starts the servers): the same
clips through the same client (the `wyoming` package's AsyncTcpClient, one connection per
utterance as Home Assistant opens them) to Verbatim and to wyoming-faster-whisper, in turn.

1. As fast as the protocol allows: time from audio-stop to the transcript, WER, rounds
   interleaved so that load weighs on both alike.
2. Ten clients at once: every one answered, and Verbatim's /v1/status p99 meanwhile.
3. Streamed at real time (Verbatim): the final transcript's delay after audio-stop, the speech
   followed by the quiet a client waits for before it stops: Home Assistant's end-of-speech
   silence (0.7 s by default, 0.25 s "aggressive"), and none (stopped at the last sample).
"""

import argparse
import array
import asyncio
import json
import random
import statistics
import sys
import threading
import time
import urllib.request
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spoken_numbers import word_errors  # noqa: E402

from wyoming.asr import Transcribe, Transcript  # noqa: E402
from wyoming.audio import AudioChunk, AudioStart, AudioStop  # noqa: E402
from wyoming.client import AsyncTcpClient  # noqa: E402
from wyoming.error import Error  # noqa: E402

CHUNK_SAMPLES = 1024  # what Home Assistant's pipeline sends at a time (16 kHz, 16-bit, mono)


def read_clip(path):
    with wave.open(str(path), "rb") as wav:
        assert (wav.getframerate(), wav.getsampwidth(), wav.getnchannels()) == (16000, 2, 1), path
        return wav.readframes(wav.getnframes())


async def utterance(port, pcm, realtime=False, language="en"):
    """(seconds from audio-stop to the transcript, its text)."""
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcribe(language=language).event())
        await client.write_event(AudioStart(rate=16000, width=2, channels=1).event())
        began = time.monotonic()
        step = CHUNK_SAMPLES * 2
        for offset in range(0, len(pcm), step):
            chunk = pcm[offset : offset + step]
            await client.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=chunk).event())
            if realtime:
                due = began + (offset + len(chunk)) / 2 / 16000
                await asyncio.sleep(max(0.0, due - time.monotonic()))
        await client.write_event(AudioStop().event())
        stopped = time.monotonic()
        while True:
            event = await asyncio.wait_for(client.read_event(), 300)
            if event is None:
                raise RuntimeError("the server closed the connection without a transcript")
            if Error.is_type(event.type):
                raise RuntimeError(f"error: {event.data}")
            if Transcript.is_type(event.type):
                return time.monotonic() - stopped, Transcript.from_event(event).text


def with_quiet_after(pcm, seconds):
    """`pcm` and `seconds` of a quiet room's floor after it (a few steps of 16-bit noise)."""
    rng = random.Random(len(pcm))
    quiet = array.array("h", (rng.randint(-3, 3) for _ in range(int(seconds * 16000))))
    return pcm + quiet.tobytes()


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summary(seconds):
    return {
        "median": statistics.median(seconds),
        "p90": percentile(seconds, 90),
        "max": max(seconds),
        "total": sum(seconds),
    }


class StatusPoller:
    """Polls Verbatim's /v1/status every 20 ms on a thread; latencies in seconds."""

    def __init__(self, port):
        self.port, self.latencies, self.stop = port, [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            asked = time.monotonic()
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/status", timeout=10) as r:
                r.read()
            self.latencies.append(time.monotonic() - asked)
            time.sleep(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--verbatim", type=int, required=True, help="Verbatim's Wyoming port")
    parser.add_argument("--api", type=int, required=True, help="Verbatim's API port")
    parser.add_argument("--peer", type=int, required=True, help="wyoming-faster-whisper's port")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--show-clips", action="store_true")
    parser.add_argument(
        "--end-silence",
        default="0.7,0.25,0",
        help="seconds of quiet streamed after the speech before audio-stop, comma-separated",
    )
    parser.add_argument("lists", nargs="+", type=Path)
    args = parser.parse_args()
    clips = []
    for listing in args.lists:
        for line in listing.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                path, reference = line.split("\t", 1)
                clips.append((listing.stem + "/" + Path(path).stem, read_clip(listing.parent / path), reference))
    servers = {"verbatim": args.verbatim, "wyoming-faster-whisper": args.peer}
    print(f"==> {len(clips)} clips, {sum(len(c[1]) for c in clips) / 32000:.1f} s of speech", file=sys.stderr)
    for name, port in servers.items():
        await utterance(port, clips[0][1])  # loads the model, not timed
    results = {name: {"seconds": [], "errors": 0, "words": 0, "by_clip": {}} for name in servers}
    for round_ in range(args.rounds):
        for clip_id, pcm, reference in clips:
            for name, port in servers.items():
                seconds, text = await utterance(port, pcm)
                results[name]["seconds"].append(seconds)
                results[name]["by_clip"].setdefault(clip_id, []).append(seconds)
                if round_ == 0:
                    wrong, total = word_errors(reference, text)
                    results[name]["errors"] += wrong
                    results[name]["words"] += total
        print(f"==> round {round_ + 1}/{args.rounds} done", file=sys.stderr)

    together = {}
    ten = (clips * 10)[:10]
    for name, port in servers.items():
        with StatusPoller(args.api) as poller:
            began = time.monotonic()
            answers = await asyncio.gather(
                *(utterance(port, pcm) for _, pcm, _ in ten), return_exceptions=True
            )
            wall = time.monotonic() - began
        answered = [a for a in answers if not isinstance(a, BaseException)]
        together[name] = {
            "answered": len(answered),
            "wall": wall,
            "slowest": max((a[0] for a in answered), default=None),
            "status_p99_ms": percentile(poller.latencies, 99) * 1000 if poller.latencies else None,
        }

    streamed = {}
    for silence in [float(s) for s in args.end_silence.split(",")]:
        by_clip = {}
        for clip_id, pcm, reference in clips:
            if len(pcm) / 32000 <= 30:
                seconds, _ = await utterance(args.verbatim, with_quiet_after(pcm, silence), realtime=True)
                by_clip[clip_id] = seconds
        streamed[silence] = by_clip

    report = {
        "fast": {},
        "together": together,
        "streamed": {
            str(silence): {**summary(list(by_clip.values())), "by_clip": by_clip}
            for silence, by_clip in streamed.items()
            if by_clip
        },
    }
    print()
    print(f"As fast as the protocol allows, {args.rounds} rounds, {len(clips)} clips: audio-stop -> transcript")
    print(f"{'server':24} {'median s':>9} {'p90 s':>7} {'max s':>7} {'total s':>8} {'WER %':>6}")
    for name, result in results.items():
        s = summary(result["seconds"])
        wer = 100 * result["errors"] / max(result["words"], 1)
        report["fast"][name] = {
            **s,
            "wer": wer,
            "errors": result["errors"],
            "words": result["words"],
            "by_clip": {c: statistics.median(t) for c, t in result["by_clip"].items()},
        }
        print(f"{name:24} {s['median']:9.3f} {s['p90']:7.3f} {s['max']:7.3f} {s['total']:8.2f} {wer:6.1f}")
    v, p = report["fast"]["verbatim"], report["fast"]["wyoming-faster-whisper"]
    print(f"{'ratio':24} {v['median'] / p['median']:9.2f} {v['p90'] / p['p90']:7.2f} {'':7} {v['total'] / p['total']:8.2f} {v['wer'] - p['wer']:+6.1f}")
    if args.show_clips:
        print()
        for clip_id, _, _ in clips:
            mine, theirs = v["by_clip"][clip_id], p["by_clip"][clip_id]
            print(f"{clip_id:40} {mine:7.3f} {theirs:7.3f} {mine / theirs:6.2f}")
    print()
    print("Ten clients at once")
    for name, t in together.items():
        status = "" if name != "verbatim" else f", /v1/status p99 {t['status_p99_ms']:.1f} ms"
        print(f"{name:24} {t['answered']}/10 answered in {t['wall']:.2f} s, slowest {t['slowest']:.2f} s after its stop{status}")
    for silence, by_clip in streamed.items():
        if not by_clip:
            continue
        times = list(by_clip.values())
        s = summary(times)
        slowest = max(by_clip, key=by_clip.get)
        print()
        print(
            f"Streamed at real time (Verbatim, {len(times)} clips up to 30 s), {silence} s of quiet "
            "before audio-stop: audio-stop -> transcript"
        )
        print(
            f"median {s['median'] * 1000:.0f} ms, p90 {percentile(times, 90) * 1000:.0f} ms, "
            f"max {s['max'] * 1000:.0f} ms ({slowest})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
