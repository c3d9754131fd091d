"""How long a person waits for dictated text, measured on a running Verbatim server.

Run by scripts/bench-dictation, which builds and starts the server and the private PulseAudio
server whose virtual microphone records what its sink plays. For each length and round, real
recordings joined with pauses become one speech of that length; a dictation is started, the speech
is played into the microphone at real time, the dictation is stopped, and GET /v1/dictation/events
tells when each text came. Standard library only.
"""

import argparse
import array
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import tomllib
import wave
from dataclasses import dataclass, field
from pathlib import Path

from spoken_numbers import word_errors

RATE = 16000
# Silence between two recordings of a speech: a pause between sentences.
PAUSE = 0.9
# The sink's and the virtual microphone's latency: the last word reaches the server this late,
# and the stop is sent this long after the speech has played (a person stopping at once).
LATENCY = 0.4
DELTA = "conversation.item.input_audio_transcription.delta"
TENTATIVE = "dictation.tentative"
SPEECH_STARTED = "input_audio_buffer.speech_started"
# The padding the server keeps before speech: audio_start_ms is this much before the voice.
SPEECH_PADDING = 0.24


class BenchError(Exception):
    """A problem that ends the run with a message and no traceback."""


@dataclass
class Recording:
    path: Path
    text: str
    seconds: float


@dataclass
class Speech:
    """A speech made of recordings: its file, reference text, length, and where its pauses
    begin (seconds from its start)."""
    path: Path
    text: str
    seconds: float
    pauses: list = field(default_factory=list)


def wav_seconds(path):
    with wave.open(str(path), "rb") as wav:
        return wav.getnframes() / wav.getframerate()


def corpus_recordings(corpus):
    """The corpus's real English recordings of speech (not the single spoken words)."""
    entries = tomllib.loads((corpus / "clips.toml").read_text(encoding="utf-8"))["clips"]
    found = []
    for entry in entries:
        if (entry["kind"], entry["language"], entry.get("voice")) != ("speech", "en", "human"):
            continue
        path = corpus / entry["file"]
        seconds = wav_seconds(path)
        if seconds >= 2.0:
            found.append(Recording(path, entry["text"], seconds))
    if not found:
        raise BenchError(f"no real English recordings in {corpus}")
    return found


def listed_recordings(list_path):
    """Recordings of your own: one `path<TAB>reference text` a line."""
    found = []
    for line in list_path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        path, text = line.split("\t", 1)
        path = (list_path.parent / path).resolve()
        found.append(Recording(path, text.strip(), wav_seconds(path)))
    if not found:
        raise BenchError(f"no recordings in {list_path}")
    return found


def trim_quiet_end(frames, keep=0.1):
    """16-bit samples `frames` without the quiet after their last loud sample, but `keep` s."""
    samples = array.array("h", frames)
    last = max((i for i, v in enumerate(samples) if abs(v) > 1000), default=len(samples) - 1)
    return samples[:min(len(samples), last + 1 + int(keep * RATE))].tobytes()


def ending_of_round(recordings, round_index, shortest):
    """The index of the recording that ends every speech of round `round_index`: the round's
    turn among the recordings that fit in the `shortest` speech (the shortest ones if none
    does), so a round's speeches end alike at every length."""
    fitting = [i for i, r in enumerate(recordings) if r.seconds <= shortest]
    if not fitting:
        fitting = sorted(range(len(recordings)), key=lambda i: recordings[i].seconds)[:1]
    return fitting[round_index % len(fitting)]


def make_speech(recordings, seconds, ending, target, stop_at_last_word=False):
    """A speech of about `seconds` written to `target`: the recordings after index `ending`,
    over and over, joined with pauses (one that would run more than 5 s past the length is
    skipped), then recording `ending` last, so speeches with the same ending compare like with
    like whatever their length. `stop_at_last_word`: the last recording's own quiet ending is
    cut to 0.1 s."""
    last = recordings[ending]
    chosen, length = [], 0.0
    index, skipped = ending + 1, 0
    room = seconds - last.seconds - PAUSE
    while length < room and skipped < len(recordings):
        recording = recordings[index % len(recordings)]
        index += 1
        if length + recording.seconds > room + 5:
            skipped += 1
            continue
        skipped = 0
        chosen.append(recording)
        length += recording.seconds + PAUSE
    chosen.append(last)
    pieces, texts, pauses, length = [], [], [], 0.0
    silence = array.array("h", [0] * int(RATE * PAUSE)).tobytes()
    for recording in chosen:
        with wave.open(str(recording.path), "rb") as wav:
            if (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) != (RATE, 1, 2):
                raise BenchError(f"{recording.path}: 16 kHz mono 16-bit WAV only")
            pieces += [wav.readframes(wav.getnframes()), silence]
        texts.append(recording.text)
        length += recording.seconds
        pauses.append(length)
        length += PAUSE
    # The person stops right after the last recording: no pause at the end.
    pieces.pop()
    pauses.pop()
    length -= PAUSE
    if stop_at_last_word:
        trimmed = trim_quiet_end(pieces[-1])
        length -= (len(pieces[-1]) - len(trimmed)) / 2 / RATE
        pieces[-1] = trimmed
    with wave.open(str(target), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(b"".join(pieces))
    return Speech(target, " ".join(texts), length, pauses)


class Server:
    """The running server named by a discovery file."""

    def __init__(self, discovery):
        info = json.loads(Path(discovery).read_text(encoding="utf-8"))
        self.port, self.token = info["port"], info["token"]

    def request(self, method, path, body=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        headers = {"Authorization": f"Bearer {self.token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        answer = json.loads(response.read() or b"null")
        connection.close()
        if response.status != 200:
            raise BenchError(f"{method} {path}: {response.status} {answer}")
        return answer

    def follow_events(self, into):
        """Appends `(monotonic time, type, data)` of every dictation event to `into`, on a thread
        of its own, once the stream is open."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port)
        connection.request("GET", "/v1/dictation/events",
                           headers={"Authorization": f"Bearer {self.token}"})
        response = connection.getresponse()
        if response.status != 200:
            raise BenchError(f"GET /v1/dictation/events: {response.status}")

        def read():
            for raw in response:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("data: "):
                    data = json.loads(line[6:])
                    into.append((time.monotonic(), data.get("type"), data))

        threading.Thread(target=read, daemon=True).start()


def cpu_seconds(pid):
    """User and system CPU time of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(events, kind, session, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for when, got, data in list(events):
            if got == kind and data.get("id") == session:
                return when, data
        time.sleep(0.01)
    raise BenchError(f"no {kind} for session {session} within {timeout} s")


def dictate(server, speech, events, server_pid):
    """One dictation of `speech`: its figures."""
    started = server.request("POST", "/v1/dictation/start", {})
    session = started["id"]
    cpu_before = cpu_seconds(server_pid)
    play_start = time.monotonic()
    subprocess.run(["paplay", "--device=verbatim_sink", "--latency-msec=50", str(speech.path)],
                   check=True)
    time.sleep(LATENCY)
    spoke = time.monotonic() - play_start
    cpu_busy = cpu_seconds(server_pid) - cpu_before
    stop_sent = time.monotonic()
    server.request("POST", "/v1/dictation/stop")
    done_at, done = wait_for(events, "dictation.completed", session, 600)
    deltas = [(when, data) for when, kind, data in list(events)
              if kind == DELTA and data.get("id") == session]
    first_text = deltas[0][0] - play_start if deltas else None
    ours = [(when, kind, data) for when, kind, data in list(events) if data.get("id") == session]
    # For each stretch of speech, how long after its voice began the first text of any kind
    # (tentative or committed, with words in it) came.
    text_after_speech = []
    stretch_starts = []
    for when, kind, data in ours:
        if kind != SPEECH_STARTED:
            continue
        voice = play_start + data["audio_start_ms"] / 1000 + SPEECH_PADDING
        texts = [w for w, k, d in ours
                 if k in (TENTATIVE, DELTA) and w > when and (d.get("text") or d.get("delta"))]
        if texts:
            text_after_speech.append(texts[0] - voice)
            stretch_starts.append(data["audio_start_ms"] / 1000)
    tentatives = sum(1 for _, kind, _ in ours if kind == TENTATIVE)
    # For each pause the speech holds, how long after it began the next text was committed.
    commit_delays = []
    for pause in speech.pauses:
        after = [when - play_start for when, _ in deltas
                 if pause <= when - play_start and when < stop_sent]
        if after:
            commit_delays.append(after[0] - pause)
    errors, words = word_errors(speech.text, done["text"])
    return {
        "seconds": round(speech.seconds, 1),
        "stop_to_text_ms": done["stop_to_text_ms"],
        "client_stop_to_text_ms": round((done_at - stop_sent) * 1000),
        "first_text_s": round(first_text, 2) if first_text is not None else None,
        "text_after_speech_s": [round(d, 2) for d in text_after_speech],
        # Where in the speech each of those stretches began (seconds), to find a slow one in
        # the server's log.
        "stretch_starts_s": [round(t, 2) for t in stretch_starts],
        "tentatives_per_minute": round(tentatives * 60 / spoke, 1),
        "commit_delays_s": [round(d, 2) for d in commit_delays],
        "cpu_share": round(cpu_busy / (spoke * os.cpu_count()), 3),
        "errors": errors,
        "words": words,
        "text": done["text"],
        # Every event of the session: seconds since the speech began to play, and its data.
        "events": [[round(when - play_start, 3), data] for when, _, data in ours],
    }


def transcribe_file(server, speech):
    """The speech transcribed as one file: its word errors and its text."""
    answer = server.request("POST", "/v1/transcribe/local-file", {"path": str(speech.path)})
    return word_errors(speech.text, answer["text"])[0], answer["text"]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def report(results, model):
    print(f"\nDictation with {model}: stop -> text (ms, as the server measures it), first text "
          "after speech began, commit delay after a pause began, word error rate of the dictation "
          "and of the same speech as one file, CPU share of the machine while speaking\n")
    print("| Speech | stop->text median | p95 | first text | text after speech began median / max | "
          "tentative / min | commit delay median | WER dictated | WER one file | "
          "CPU while speaking |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for length, runs in results.items():
        stops = [r["stop_to_text_ms"] for r in runs]
        firsts = [r["first_text_s"] for r in runs if r["first_text_s"] is not None]
        delays = [d for r in runs for d in r["commit_delays_s"]]
        dictated = sum(r["errors"] for r in runs) / max(1, sum(r["words"] for r in runs))
        file_wer = sum(r["file_errors"] for r in runs) / max(1, sum(r["words"] for r in runs))
        cpu = max(r["cpu_share"] for r in runs)
        first = f"{statistics.median(firsts):.2f} s" if firsts else "-"
        afters = [d for r in runs for d in r["text_after_speech_s"]]
        after = (f"{statistics.median(afters):.2f} / {max(afters):.2f} s" if afters else "-")
        per_minute = statistics.median(r["tentatives_per_minute"] for r in runs)
        delay = f"{statistics.median(delays):.2f} s" if delays else "-"
        print(f"| {length} s ({runs[0]['seconds']} s) | {statistics.median(stops):.0f} | "
              f"{percentile(stops, 0.95):.0f} | {first} | {after} | {per_minute:.0f} | "
              f"{delay} | {dictated:.1%} | "
              f"{file_wer:.1%} | {cpu:.0%} max |")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--discovery", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--lengths", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--speech", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--stop-at-last-word", action="store_true")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    recordings = (listed_recordings(args.speech) if args.speech
                  else corpus_recordings(args.corpus))
    server = Server(args.discovery)
    events = []
    server.follow_events(events)
    time.sleep(0.2)
    results = {}
    lengths = [int(s) for s in args.lengths.split(",")]
    for length in lengths:
        runs = []
        for round_index in range(args.rounds):
            target = args.work / f"speech-{length}-{round_index}.wav"
            ending = ending_of_round(recordings, round_index, min(lengths))
            speech = make_speech(recordings, length, ending, target, args.stop_at_last_word)
            run = dictate(server, speech, events, args.server_pid)
            run["file_errors"], run["file_text"] = transcribe_file(server, speech)
            run["reference"] = speech.text
            runs.append(run)
            print(f"{length} s, round {round_index + 1}/{args.rounds}: stop->text "
                  f"{run['stop_to_text_ms']} ms, first text {run['first_text_s']} s, "
                  f"{run['errors']}/{run['words']} word errors", file=sys.stderr, flush=True)
        results[length] = runs
    report(results, args.model)
    if args.json:
        args.json.write_text(json.dumps({"model": args.model, "results": results}, indent=1))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BenchError as err:
        print(f"bench-dictation: {err}", file=sys.stderr)
        sys.exit(1)
