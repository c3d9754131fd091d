"""Side by side: a running Verbatim server and faster-whisper on the same corpus clips.

Run by scripts/bench-peers, which builds and starts the server, fetches the CTranslate2 weights and
installs faster-whisper into a private virtual environment. Each clip goes to both engines in
turn (which one goes first alternates from clip to clip and from round to round), several rounds.
Speech clips give median seconds per clip, seconds per round and the word error rate; silence and
noise clips are reported apart (seconds per clip and whether any text came back).
"""

import argparse
import http.client
import json
import os
import statistics
import sys
import time
import wave
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python before 3.11: the venv installs tomli.
    import tomli as tomllib

from spoken_numbers import word_errors

VERBATIM, FASTER_WHISPER = "verbatim", "faster-whisper"


class BenchError(Exception):
    """A problem that ends the run with a message and no traceback."""


@dataclass
class Clip:
    id: str
    path: Path
    kind: str
    text: str
    seconds: float


@dataclass
class Runs:
    """What one engine gave for one clip: seconds and text of every round."""
    seconds: list = field(default_factory=list)
    texts: list = field(default_factory=list)


def load_clips(corpus, language, shortest, longest):
    """The speech clips in `language` lasting shortest..longest seconds, and every silence and
    noise clip, in corpus order."""
    entries = tomllib.loads((corpus / "clips.toml").read_text(encoding="utf-8"))["clips"]
    speech, quiet = [], []
    for entry in entries:
        path = corpus / entry["file"]
        with wave.open(str(path), "rb") as wav:
            seconds = wav.getnframes() / wav.getframerate()
        clip = Clip(entry["id"], path, entry["kind"], entry["text"], seconds)
        if entry["kind"] == "speech":
            if entry["language"] == language and shortest <= seconds <= longest:
                speech.append(clip)
        else:
            quiet.append(clip)
    if not speech:
        raise BenchError(f"no {language} speech clips of {shortest}-{longest} s in {corpus}")
    return speech, quiet


class VerbatimClient:
    """Raw WAV uploads to POST /v1/transcribe of the server named by a discovery file."""

    def __init__(self, discovery, language, model):
        info = json.loads(Path(discovery).read_text(encoding="utf-8"))
        self.port, self.token = info["port"], info["token"]
        self.language, self.model = language, model

    def transcribe(self, clip):
        body = clip.path.read_bytes()
        headers = {"Content-Type": "audio/wav", "X-Language": self.language,
                   "Authorization": f"Bearer {self.token}"}
        start = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            connection.request("POST", "/v1/transcribe", body=body, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        except OSError as error:
            raise BenchError(f"Verbatim server on port {self.port}: {error}") from error
        finally:
            connection.close()
        elapsed = time.perf_counter() - start
        try:
            answer = json.loads(payload)
        except ValueError:
            answer = {}
        if response.status != 200:
            message = answer.get("message") or payload[:200].decode("utf-8", "replace")
            raise BenchError(f"Verbatim answered {response.status} for {clip.id}: {message}")
        if answer.get("model") != self.model:
            raise BenchError(f"Verbatim used model {answer.get('model')!r}, not {self.model!r}")
        return answer["text"].strip(), elapsed


class FasterWhisper:
    """faster-whisper on the CTranslate2 folder: int8 on the CPU, greedy, the language given."""

    def __init__(self, ct2_dir, threads, language, vad):
        from faster_whisper import WhisperModel
        self.model = WhisperModel(str(ct2_dir), device="cpu", compute_type="int8",
                                  cpu_threads=threads)
        self.language, self.vad = language, vad

    def transcribe(self, clip):
        start = time.perf_counter()
        segments, _ = self.model.transcribe(
            str(clip.path), language=self.language, beam_size=1, best_of=1, temperature=0,
            vad_filter=self.vad, condition_on_previous_text=False)
        text = "".join(segment.text for segment in segments)  # decoding happens here
        return text.strip(), time.perf_counter() - start


def run_rounds(engines, clips, rounds, progress):
    """{engine: {clip id: Runs}}; per clip the engines take turns at going first."""
    results = {name: {clip.id: Runs() for clip in clips} for name in engines}
    names = list(engines)
    for round_index in range(rounds):
        for clip_index, clip in enumerate(clips):
            order = names if (round_index + clip_index) % 2 == 0 else names[::-1]
            for name in order:
                text, seconds = engines[name].transcribe(clip)
                runs = results[name][clip.id]
                runs.seconds.append(seconds)
                runs.texts.append(text)
        progress(f"round {round_index + 1}/{rounds} done")
    return results


def summarise_speech(runs, clips, rounds):
    """Median s/clip over every clip and round, seconds per round (median of rounds), and the
    word error rate of the first round's texts."""
    every = [s for clip in clips for s in runs[clip.id].seconds]
    per_round = [sum(runs[clip.id].seconds[r] for clip in clips) for r in range(rounds)]
    errors = words = 0
    for clip in clips:
        e, n = word_errors(clip.text, runs[clip.id].texts[0])
        errors, words = errors + e, words + n
    unstable = [clip.id for clip in clips if len(set(runs[clip.id].texts)) > 1]
    return {
        "median_s_per_clip": statistics.median(every),
        "round_totals_s": per_round,
        "median_round_total_s": statistics.median(per_round),
        "word_errors": errors,
        "reference_words": words,
        "wer_percent": 100.0 * errors / words,
        "clips_whose_text_changed_between_rounds": unstable,
        "clips": {clip.id: {"seconds": runs[clip.id].seconds, "text": runs[clip.id].texts[0],
                            "word_errors": word_errors(clip.text, runs[clip.id].texts[0])[0]}
                  for clip in clips},
    }


def summarise_quiet(runs, clips):
    return {clip.id: {"kind": clip.kind, "audio_s": clip.seconds,
                      "median_s": statistics.median(runs[clip.id].seconds),
                      "seconds": runs[clip.id].seconds,
                      "texts": sorted({t for t in runs[clip.id].texts if t})}
            for clip in clips}


def print_report(report, speech, quiet, show_texts):
    s = report["speech"]
    v, f = s[VERBATIM], s[FASTER_WHISPER]
    audio = sum(clip.seconds for clip in speech)
    print(f"\nSpeech: {len(speech)} {report['language']} clips, {audio:.1f} s of audio per round, "
          f"{report['rounds']} rounds, model {report['model']}, threads: {report['threads']}")
    print(f"{'engine':<16}{'median s/clip':>15}{'s/round':>10}{'WER %':>8}  errors/words")
    for name, row in ((VERBATIM, v), (FASTER_WHISPER, f)):
        print(f"{name:<16}{row['median_s_per_clip']:>15.3f}{row['median_round_total_s']:>10.2f}"
              f"{row['wer_percent']:>8.1f}  {row['word_errors']}/{row['reference_words']}")
    r = report["ratios_verbatim_over_faster_whisper"]
    print(f"{'ratio V/FW':<16}{r['median_s_per_clip']:>15.2f}{r['median_round_total_s']:>10.2f}"
          f"{v['wer_percent'] - f['wer_percent']:>+8.1f}  (WER: difference in points)")
    for name, row in ((VERBATIM, v), (FASTER_WHISPER, f)):
        if row["clips_whose_text_changed_between_rounds"]:
            print(f"note: {name} texts changed between rounds for "
                  f"{', '.join(row['clips_whose_text_changed_between_rounds'])}")
    if show_texts:
        print("\nPer clip (first round): errors, text")
        for clip in speech:
            print(f"  {clip.id}: {clip.text}")
            for name, row in ((VERBATIM, v), (FASTER_WHISPER, f)):
                c = row["clips"][clip.id]
                print(f"    {name:<15}{c['word_errors']:>2}  {c['text']}")
    if quiet:
        q = report["quiet"]
        print(f"\nSilence and noise (median s per clip over {report['rounds']} rounds; "
              "text: whether any round returned text)")
        print(f"{'clip':<14}{'audio s':>8}{'Verbatim s':>12}{'text':>6}{'faster-whisper s':>18}"
              f"{'text':>6}")
        for clip in quiet:
            a, b = q[VERBATIM][clip.id], q[FASTER_WHISPER][clip.id]
            print(f"{clip.id:<14}{clip.seconds:>8.1f}{a['median_s']:>12.3f}"
                  f"{'yes' if a['texts'] else 'no':>6}{b['median_s']:>18.3f}"
                  f"{'yes' if b['texts'] else 'no':>6}")
        for name in (VERBATIM, FASTER_WHISPER):
            for clip in quiet:
                for text in q[name][clip.id]["texts"]:
                    print(f"  {name} on {clip.id}: {text!r}")
    load, cpus = report["load_average"], report["cpus"]
    print(f"\nLoad average (1 min) before {load['before'][0]:.2f}, after {load['after'][0]:.2f} "
          f"on {cpus} CPUs")
    if max(load["before"][0], load["after"][0]) > cpus:
        print("note: other work kept every CPU busy; threads that wait on each other lose "
              "most when CPUs are shared, so compare with --threads 1 too")


def log(message):
    print(f"==> {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--ct2", type=Path, required=True, help="CTranslate2 model folder")
    p.add_argument("--discovery", type=Path, required=True, help="the server's api-discovery.json")
    p.add_argument("--model", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--language", default="en")
    p.add_argument("--shortest", type=float, default=1.0)
    p.add_argument("--longest", type=float, default=7.0)
    p.add_argument("--faster-whisper-vad", action="store_true")
    p.add_argument("--no-quiet", action="store_true", help="leave out silence and noise clips")
    p.add_argument("--show-texts", action="store_true")
    p.add_argument("--verbatim-version", default="")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be 1 or more")
    return args


def main(argv):
    args = parse_args(argv)
    speech, quiet = load_clips(args.corpus, args.language, args.shortest, args.longest)
    if args.no_quiet:
        quiet = []
    log(f"loading faster-whisper on {args.ct2}")
    engines = {
        VERBATIM: VerbatimClient(args.discovery, args.language, args.model),
        FASTER_WHISPER: FasterWhisper(args.ct2, args.threads, args.language,
                                      args.faster_whisper_vad),
    }
    log("warming up both engines (not timed)")
    for engine in engines.values():
        engine.transcribe(speech[0])
    load_before = os.getloadavg()
    log(f"timing {len(speech)} speech and {len(quiet)} silence/noise clips, {args.rounds} rounds")
    results = run_rounds(engines, speech + quiet, args.rounds, log)
    report = {
        "model": args.model, "language": args.language, "rounds": args.rounds,
        "threads": args.threads, "faster_whisper_vad": args.faster_whisper_vad,
        "versions": {"verbatim": args.verbatim_version,
                     "faster_whisper": metadata.version("faster-whisper"),
                     "ctranslate2": metadata.version("ctranslate2")},
        "cpus": os.cpu_count(),
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "speech": {name: summarise_speech(results[name], speech, args.rounds) for name in engines},
        "quiet": {name: summarise_quiet(results[name], quiet) for name in engines},
    }
    v, f = report["speech"][VERBATIM], report["speech"][FASTER_WHISPER]
    report["ratios_verbatim_over_faster_whisper"] = {
        key: v[key] / f[key] for key in ("median_s_per_clip", "median_round_total_s")}
    print_report(report, speech, quiet, args.show_texts)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        log(f"results written to {args.json}")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
