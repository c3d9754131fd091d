"""Realtime transcription sessions measured on a running Verbatim server.

Run by scripts/bench-realtime, which builds and starts the server. Real recordings joined with
pauses (one utterance each) are streamed over GET /v1/realtime?intent=transcription as PCM16 at
24 kHz, at real time, in 100 ms messages, as a client with its own microphone would:

1. one session per round: turns completed per utterance, the word error rate of the completed
   turns against the same speech transcribed as one file, and for each turn the time from
   `input_audio_buffer.committed` to its first delta and to `...completed`;
2. N sessions at once, each streaming its own speech at real time (its own pauses of 1 to 2 s
   between recordings, unless --aligned), while /v1/status is asked every 50 ms: how far each
   session's text falls behind its audio (completed, less the moment the turn's last audio was
   sent; for a turn committed while speech goes on, cut at its length, the moment the next
   turn's audio begins), and the status answer times. The JSON also holds, per turn, its speech's
   length and commit -> completed (`speech_and_wait_s`), and the client's own messages sent
   more than 0.2 s late (`late_sends`: audio time, delay), which would count in the figures.

Needs the `websockets` package (scripts/bench-realtime runs it in the tests' private Python
environment).
"""

import argparse
import array
import asyncio
import base64
import http.client
import json
import random
import statistics
import sys
import threading
import time
import wave
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).parent))
from bench_dictation import (  # noqa: E402
    BenchError,
    Server,
    corpus_recordings,
    listed_recordings,
    percentile,
)
from spoken_numbers import word_errors  # noqa: E402

RATE = 16000
SEND_RATE = 24000
BLOCK = 0.1
# Silence between two utterances.
PAUSE = 1.5
ITEM = "conversation.item.input_audio_transcription"


def make_speech(recordings, seconds, start, target, pauses=None):
    """Recordings from index `start` on, joined with silence (and silence before the first and
    after the last), until about `seconds` long; written to `target` (16 kHz). The silences
    are PAUSE long, or drawn from `pauses` (a random.Random) between 1 and 2 s."""
    def silence():
        pause = PAUSE if pauses is None else pauses.uniform(1.0, 2.0)
        return array.array("h", [0] * int(RATE * pause)).tobytes()
    pieces = [silence()]
    texts, length, index = [], len(pieces[0]) / 2 / RATE, start
    while length < seconds or not texts:
        recording = recordings[index % len(recordings)]
        index += 1
        with wave.open(str(recording.path), "rb") as wav:
            if (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) != (RATE, 1, 2):
                raise BenchError(f"{recording.path}: 16 kHz mono 16-bit WAV only")
            pieces += [wav.readframes(wav.getnframes()), silence()]
        texts.append(recording.text)
        length += recording.seconds + len(pieces[-1]) / 2 / RATE
    with wave.open(str(target), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(b"".join(pieces))
    return target, texts, length


def at_24k(path):
    """The 16 kHz file's samples at 24 kHz (linear interpolation), as PCM16 bytes."""
    with wave.open(str(path), "rb") as wav:
        samples = array.array("h", wav.readframes(wav.getnframes()))
    out = array.array("h", bytes(2 * (len(samples) * 3 // 2)))
    last = len(samples) - 1
    for i in range(len(out)):
        x = i * 2 / 3
        j = int(x)
        k = min(j + 1, last)
        out[i] = int(samples[j] + (samples[k] - samples[j]) * (x - j))
    return out.tobytes()


async def stream(port, token, pcm, model):
    """Streams `pcm` (24 kHz) at real time through one session; gives its events, each with
    its arrival time in seconds since the first audio was sent, and the turns' `lag`s."""
    headers = {"Authorization": f"Bearer {token}"}
    url = f"ws://127.0.0.1:{port}/v1/realtime?intent=transcription"
    events = []
    async with websockets.connect(url, additional_headers=headers, max_size=None) as socket:
        created = json.loads(await socket.recv())
        if created["type"] != "session.created":
            raise BenchError(f"no session: {created}")
        session = {"type": "transcription"}
        if model:
            session["audio"] = {"input": {"transcription": {"model": model}}}
        await socket.send(json.dumps({"type": "session.update", "session": session}))
        started = time.monotonic()
        counts = {"committed": 0, "finished": 0}

        async def receive():
            async for message in socket:
                event = json.loads(message)
                event["at"] = time.monotonic() - started
                events.append(event)
                kind = event["type"]
                if kind == "error":
                    raise BenchError(f"error event: {event}")
                counts["committed"] += kind == "input_audio_buffer.committed"
                counts["finished"] += kind in (f"{ITEM}.completed", f"{ITEM}.failed")

        reader = asyncio.create_task(receive())
        step = int(SEND_RATE * BLOCK) * 2
        for i, offset in enumerate(range(0, len(pcm), step)):
            late = time.monotonic() - (started + i * BLOCK)
            if late > 0.2:
                events.append({"type": "bench.late_send", "audio_s": i * BLOCK, "late_s": late})
            audio = base64.b64encode(pcm[offset:offset + step]).decode()
            await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))
            delay = started + (i + 1) * BLOCK - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        # The last turn settles after the trailing pause; wait for every committed turn's text.
        deadline = time.monotonic() + 120
        await asyncio.sleep(1.0)
        while counts["finished"] < counts["committed"] and time.monotonic() < deadline:
            if reader.done():
                reader.result()
                break
            await asyncio.sleep(0.05)
        reader.cancel()
    return events


def turns(events):
    """Per turn: its audio end (s), commit, first delta and completion times (s), and text.
    A turn committed while speech goes on (no `speech_stopped`: cut at its length) ends where
    the next one starts."""
    found, follows = {}, {}
    for event in events:
        item = event.get("item_id")
        if item is None:
            continue
        turn = found.setdefault(item, {"text": "", "delta": None})
        kind = event["type"]
        if kind == "input_audio_buffer.committed":
            turn["committed"] = event["at"]
            if event.get("previous_item_id"):
                follows[event["previous_item_id"]] = item
        elif kind == "input_audio_buffer.speech_started":
            turn["audio_start"] = event["audio_start_ms"] / 1000
        elif kind == "input_audio_buffer.speech_stopped":
            turn["audio_end"] = event["audio_end_ms"] / 1000
        elif kind == f"{ITEM}.delta" and turn["delta"] is None:
            turn["delta"] = event["at"]
        elif kind == f"{ITEM}.completed":
            turn["completed"] = event["at"]
            turn["text"] = event["transcript"]
    for item, turn in found.items():
        after = found.get(follows.get(item), {})
        if "audio_end" not in turn and "audio_start" in after:
            turn["audio_end"] = after["audio_start"]
    return [t for t in found.values() if "completed" in t]


class StatusPoller:
    """Asks GET /v1/status every 50 ms on a thread of its own; keeps each answer's time."""

    def __init__(self, port):
        self.port, self.times, self.stop = port, [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            began = time.monotonic()
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            connection.request("GET", "/v1/status")
            connection.getresponse().read()
            connection.close()
            self.times.append((time.monotonic() - began) * 1000)
            time.sleep(0.05)


def one_session(server, recordings, seconds, rounds, work, model):
    rows = []
    for round_ in range(rounds):
        path, texts, length = make_speech(
            recordings, seconds, round_ * 3, work / f"speech-{round_}.wav")
        events = asyncio.run(stream(server.port, server.token, at_24k(path), model))
        done = turns(events)
        heard = " ".join(t["text"] for t in done)
        reference = " ".join(texts)
        errors, words = word_errors(reference, heard)
        answer = server.request("POST", "/v1/transcribe/local-file", {"path": str(path)})
        file_errors, _ = word_errors(reference, answer["text"])
        rows.append({
            "seconds": round(length, 1),
            "utterances": len(texts),
            "turns": len(done),
            "words": words,
            "errors": errors,
            "file_errors": file_errors,
            "reference": reference,
            "streamed_text": heard,
            "file_text": answer["text"],
            "commit_to_delta_ms": [(t["delta"] - t["committed"]) * 1000 for t in done
                                   if t["delta"] is not None],
            "commit_to_completed_ms": [(t["completed"] - t["committed"]) * 1000 for t in done],
        })
        print(f"  round {round_ + 1}: {len(texts)} utterances, {len(done)} turns, "
              f"WER {errors / max(1, words):.1%} (file {file_errors / max(1, words):.1%})",
              file=sys.stderr)
    return rows


def concurrent(server, recordings, seconds, sessions, work, model, aligned):
    # Each session speaks the recordings from its own first one on. With the same pause after
    # every recording (`aligned`), every session ends its round of them at the same moment:
    # all sessions commit a turn at once, once a round. Speakers pause for different times,
    # so by default each session's pauses are its own (1 to 2 s, drawn with its index as seed).
    speeches = [at_24k(make_speech(recordings, seconds, i, work / f"many-{i}.wav",
                                   None if aligned else random.Random(i))[0])
                for i in range(sessions)]
    poller = StatusPoller(server.port)
    poller.thread.start()

    async def all_sessions():
        return await asyncio.gather(*(stream(server.port, server.token, pcm, model)
                                      for pcm in speeches))

    results = asyncio.run(all_sessions())
    poller.stop.set()
    poller.thread.join()
    lags = [[t["completed"] - t["audio_end"] for t in turns(events) if "audio_end" in t]
            for events in results]
    # Per turn, in the order of `lag_s`: its speech's length and commit -> completed.
    spans = [[(round(t["audio_end"] - t.get("audio_start", t["audio_end"]), 2),
               round(t["completed"] - t["committed"], 2))
              for t in turns(events) if "audio_end" in t]
             for events in results]
    return {
        "sessions": sessions,
        "seconds": seconds,
        "turns": sum(len(lag) for lag in lags),
        "lag_s": lags,
        "speech_and_wait_s": spans,
        "late_sends": [[(round(e["audio_s"], 1), round(e["late_s"], 2)) for e in events
                        if e["type"] == "bench.late_send"] for events in results],
        "status_ms": poller.times,
    }


def report(single, many, model):
    print(f"\nRealtime sessions with {model}, 24 kHz PCM16 streamed at real time\n")
    commits = [ms for r in single for ms in r["commit_to_completed_ms"]]
    deltas = [ms for r in single for ms in r["commit_to_delta_ms"]]
    words = sum(r["words"] for r in single)
    print("| Speech | utterances | turns | WER streamed | WER one file | committed -> first delta "
          "median | committed -> completed median | p90 | max |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {len(single)} x {single[0]['seconds']} s | {sum(r['utterances'] for r in single)} | "
          f"{sum(r['turns'] for r in single)} | "
          f"{sum(r['errors'] for r in single) / max(1, words):.1%} | "
          f"{sum(r['file_errors'] for r in single) / max(1, words):.1%} | "
          f"{statistics.median(deltas):.0f} ms | {statistics.median(commits):.0f} ms | "
          f"{percentile(commits, 0.9):.0f} ms | {max(commits):.0f} ms |")
    if many:
        lags = [lag for session in many["lag_s"] for lag in session]
        worst = [max(session) if session else 0 for session in many["lag_s"]]
        status = many["status_ms"]
        print(f"\n| Sessions at once | turns | text behind audio median | p90 | worst session max "
              f"| /v1/status median | p99 | max |")
        print("|---|---|---|---|---|---|---|---|")
        print(f"| {many['sessions']} x {many['seconds']} s | {many['turns']} | "
              f"{statistics.median(lags):.2f} s | {percentile(lags, 0.9):.2f} s | "
              f"{max(worst):.2f} s | {statistics.median(status):.1f} ms | "
              f"{percentile(status, 0.99):.1f} ms | {max(status):.1f} ms |")
        over = sum(lag > 2 for lag in lags)
        late = [late for session in many["late_sends"] for _, late in session]
        print(f"\n{over} of {len(lags)} turns more than 2 s behind their audio.")
        if late:
            print(f"This client sent {len(late)} messages more than 0.2 s late (at worst "
                  f"{max(late):.2f} s): its text-behind figures hold that delay too.")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--discovery", required=True)
    parser.add_argument("--model", default="")
    parser.add_argument("--speech", type=Path)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--aligned", action="store_true")
    args = parser.parse_args(argv)
    try:
        server = Server(args.discovery)
        recordings = (listed_recordings(args.speech) if args.speech
                      else corpus_recordings(args.corpus))
        print(f"one session, {args.rounds} rounds of {args.seconds:.0f} s", file=sys.stderr)
        single = one_session(server, recordings, args.seconds, args.rounds, args.work, args.model)
        many = None
        if args.sessions > 0:
            print(f"{args.sessions} sessions at once", file=sys.stderr)
            many = concurrent(server, recordings, args.seconds, args.sessions, args.work,
                              args.model, args.aligned)
        report(single, many, args.model or "the selected model")
        if args.json:
            args.json.write_text(json.dumps({"single": single, "many": many}, indent=1))
    except BenchError as err:
        print(f"bench-realtime: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
