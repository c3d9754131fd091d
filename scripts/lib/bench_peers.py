"""Side by side: a running Verbatim server and faster-whisper on the same corpus clips.

Run by scripts/bench-peers, which builds and starts the server, fetches the CTranslate2 weights and
installs faster-whisper into a private virtual environment. Each clip goes to both engines in
turn (which one goes first alternates from clip to clip and from round to round), several rounds.
Speech clips give median, 90th percentile and slowest seconds per clip, seconds per round and the
word error rate, for the synthetic clips, the real recordings and any clips of your own
(`--extra`) apart; silence and noise clips are reported apart (seconds per clip and whether any
text came back). Then a long file: real clips joined with pauses, at least five minutes, against
faster-whisper plain, with its VAD filter and with its BatchedInferencePipeline.
"""

import argparse
import array
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


SETS = ("synthetic", "real", "extra")


@dataclass
class Clip:
    id: str
    path: Path
    kind: str
    text: str
    seconds: float
    set: str = "synthetic"


@dataclass
class Runs:
    """What one engine gave for one clip: seconds and text of every round."""
    seconds: list = field(default_factory=list)
    texts: list = field(default_factory=list)


def wav_seconds(path):
    with wave.open(str(path), "rb") as wav:
        return wav.getnframes() / wav.getframerate()


def load_clips(corpus, language, shortest, longest):
    """The speech clips in `language` lasting shortest..longest seconds (synthetic and real
    recordings), and every silence and noise clip, in corpus order."""
    entries = tomllib.loads((corpus / "clips.toml").read_text(encoding="utf-8"))["clips"]
    speech, quiet = [], []
    for entry in entries:
        path = corpus / entry["file"]
        seconds = wav_seconds(path)
        real = entry["source"]["tool"] == "recording"
        clip = Clip(entry["id"], path, entry["kind"], entry["text"], seconds,
                    "real" if real else "synthetic")
        if entry["kind"] == "speech":
            if entry["language"] == language and shortest <= seconds <= longest:
                speech.append(clip)
        else:
            quiet.append(clip)
    if not speech:
        raise BenchError(f"no {language} speech clips of {shortest}-{longest} s in {corpus}")
    return speech, quiet


def load_extra(list_path):
    """Clips of your own: one `path<TAB>reference text` a line (16-bit PCM WAV; paths relative
    to the list's folder)."""
    clips = []
    for line in list_path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        path, text = line.split("\t", 1)
        path = (list_path.parent / path).resolve()
        clips.append(Clip(path.stem, path, "speech", text.strip(), wav_seconds(path), "extra"))
    if not clips:
        raise BenchError(f"no clips in {list_path}")
    return clips


def long_file(clips, minutes, pause, target):
    """Writes `clips` (16 kHz mono 16-bit WAV) joined with `pause` seconds of silence between
    them, over and over until at least `minutes` long, to `target`; gives its reference text."""
    pieces, texts, seconds = [], [], 0.0
    silence = array.array("h", [0] * int(16000 * pause)).tobytes()
    while seconds < minutes * 60:
        for clip in clips:
            with wave.open(str(clip.path), "rb") as wav:
                if (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) != (16000, 1, 2):
                    raise BenchError(f"{clip.path}: the long file takes 16 kHz mono 16-bit WAV")
                pieces += [wav.readframes(wav.getnframes()), silence]
            texts.append(clip.text)
            seconds += clip.seconds + pause
    with wave.open(str(target), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(b"".join(pieces))
    return " ".join(texts), seconds


class VerbatimClient:
    """Raw WAV uploads to POST /v1/transcribe of the server named by a discovery file."""

    def __init__(self, discovery, language, model, override=False):
        info = json.loads(Path(discovery).read_text(encoding="utf-8"))
        self.port, self.token = info["port"], info["token"]
        self.language, self.model, self.override = language, model, override

    def transcribe(self, clip):
        body = clip.path.read_bytes()
        headers = {"Content-Type": "audio/wav", "X-Language": self.language,
                   "Authorization": f"Bearer {self.token}"}
        if self.override:
            headers["X-Model"] = self.model
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
    """faster-whisper on the CTranslate2 folder: int8 on the CPU, greedy, the language given;
    plain, with its VAD filter, or through its BatchedInferencePipeline."""

    def __init__(self, ct2_dir, threads, language, vad, batched=False, model=None):
        from faster_whisper import BatchedInferencePipeline, WhisperModel
        self.model = model or WhisperModel(str(ct2_dir), device="cpu", compute_type="int8",
                                           cpu_threads=threads)
        self.pipeline = BatchedInferencePipeline(model=self.model) if batched else None
        self.language, self.vad = language, vad

    def transcribe(self, clip):
        start = time.perf_counter()
        if self.pipeline:
            segments, _ = self.pipeline.transcribe(
                str(clip.path), language=self.language, beam_size=1, best_of=1, temperature=0,
                condition_on_previous_text=False)
        else:
            segments, _ = self.model.transcribe(
                str(clip.path), language=self.language, beam_size=1, best_of=1,
                temperature=0, vad_filter=self.vad, condition_on_previous_text=False)
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


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def summarise_speech(runs, clips, rounds):
    """Median, 90th percentile and slowest s/clip over every clip and round, seconds per round
    (median of rounds), and the word error rate of the first round's texts."""
    every = [s for clip in clips for s in runs[clip.id].seconds]
    per_round = [sum(runs[clip.id].seconds[r] for clip in clips) for r in range(rounds)]
    errors = words = 0
    for clip in clips:
        e, n = word_errors(clip.text, runs[clip.id].texts[0])
        errors, words = errors + e, words + n
    unstable = [clip.id for clip in clips if len(set(runs[clip.id].texts)) > 1]
    return {
        "median_s_per_clip": statistics.median(every),
        "p90_s_per_clip": percentile(every, 0.9),
        "max_s_per_clip": max(every),
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


RATIO_KEYS = ("median_s_per_clip", "p90_s_per_clip", "median_round_total_s")


def print_report(report, sets, quiet, show_texts):
    print(f"\nSpeech: {report['language']}, {report['rounds']} rounds, model {report['model']}, "
          f"threads: {report['threads']}")
    print(f"{'set':<10}{'engine':<26}{'clips':>6}{'audio s':>8}{'median s':>10}{'p90 s':>8}"
          f"{'max s':>8}{'s/round':>9}{'WER %':>7}  errors/words")
    for name, clips in sets.items():
        s = report["speech"][name]
        audio = sum(clip.seconds for clip in clips)
        for engine in report["engines"]:
            row = s[engine]
            print(f"{name:<10}{engine:<26}{len(clips):>6}{audio:>8.1f}"
                  f"{row['median_s_per_clip']:>10.3f}{row['p90_s_per_clip']:>8.3f}"
                  f"{row['max_s_per_clip']:>8.3f}{row['median_round_total_s']:>9.2f}"
                  f"{row['wer_percent']:>7.1f}  {row['word_errors']}/{row['reference_words']}")
        r = s["ratios_verbatim_over_faster_whisper"]
        v, f = s[VERBATIM], s[FASTER_WHISPER]
        print(f"{name:<10}{'ratio V/FW':<26}{'':>6}{'':>8}{r['median_s_per_clip']:>10.2f}"
              f"{r['p90_s_per_clip']:>8.2f}{'':>8}{r['median_round_total_s']:>9.2f}"
              f"{v['wer_percent'] - f['wer_percent']:>+7.1f}  (WER: difference in points)")
        for engine, r in s["ratios_over_faster_whisper"].items():
            if engine == VERBATIM:
                continue
            e = s[engine]
            print(f"{name:<10}{'ratio ' + engine.split()[-1] + '/FW':<26}{'':>6}{'':>8}"
                  f"{r['median_s_per_clip']:>10.2f}{r['p90_s_per_clip']:>8.2f}{'':>8}"
                  f"{r['median_round_total_s']:>9.2f}{e['wer_percent'] - f['wer_percent']:>+7.1f}")
        for engine in report["engines"]:
            if s[engine]["clips_whose_text_changed_between_rounds"]:
                print(f"note: {engine} texts changed between rounds for "
                      f"{', '.join(s[engine]['clips_whose_text_changed_between_rounds'])}")
        if show_texts:
            print(f"\nPer clip of {name} (first round): errors, text")
            for clip in clips:
                print(f"  {clip.id}: {clip.text}")
                for engine in report["engines"]:
                    c = s[engine]["clips"][clip.id]
                    print(f"    {engine:<25}{c['word_errors']:>2}  {c['text']}")
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
    if report.get("long"):
        long = report["long"]
        print(f"\nLong file: {long['clips']} real clips joined with {long['pause_s']} s pauses, "
              f"{long['audio_s']:.0f} s of audio, {long['rounds']} rounds (median)")
        print(f"{'engine':<34}{'s':>8}{'x real time':>12}{'WER %':>7}  errors/words")
        for engine, row in long["engines"].items():
            print(f"{engine:<34}{row['median_s']:>8.2f}{long['audio_s'] / row['median_s']:>12.0f}"
                  f"{row['wer_percent']:>7.1f}  {row['word_errors']}/{row['reference_words']}")
            if show_texts:
                print(f"    {row['text'][:400]}...")
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
    p.add_argument("--also", default="",
                   help="more Verbatim models to time on the same clips, comma-separated")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--language", default="en")
    p.add_argument("--shortest", type=float, default=1.0)
    p.add_argument("--longest", type=float, default=7.0)
    p.add_argument("--faster-whisper-vad", action="store_true")
    p.add_argument("--no-quiet", action="store_true", help="leave out silence and noise clips")
    p.add_argument("--show-texts", action="store_true")
    p.add_argument("--extra", type=Path, help="clips of your own: path<TAB>text a line")
    p.add_argument("--long-minutes", type=float, default=5.0,
                   help="the long file's length (0: no long file)")
    p.add_argument("--long-from", choices=("real", "extra"), default="real",
                   help="the clips the long file is made of")
    p.add_argument("--long-pause", type=float, default=1.5,
                   help="seconds of silence between the long file's clips")
    p.add_argument("--long-rounds", type=int, default=2)
    p.add_argument("--work", type=Path, default=Path("/tmp"), help="where the long file goes")
    p.add_argument("--verbatim-version", default="")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be 1 or more")
    return args


def run_long(args, engines, model, clips):
    """The long file through Verbatim and three faster-whisper paths, `args.long_rounds` each."""
    target = args.work / "verbatim-bench-long.wav"
    text, seconds = long_file(clips, args.long_minutes, args.long_pause, target)
    long_clip = Clip("long", target, "speech", text, seconds, "long")
    paths = {name: engine for name, engine in engines.items() if name != FASTER_WHISPER}
    paths |= {
        f"{FASTER_WHISPER} plain": engines[FASTER_WHISPER],
        f"{FASTER_WHISPER} vad_filter=True": FasterWhisper(None, args.threads, args.language,
                                                          True, model=model),
        f"{FASTER_WHISPER} BatchedInferencePipeline": FasterWhisper(
            None, args.threads, args.language, False, batched=True, model=model),
    }
    results = {}
    for name, engine in paths.items():
        log(f"long file ({seconds:.0f} s) through {name}")
        runs = [engine.transcribe(long_clip) for _ in range(args.long_rounds)]
        errors, words = word_errors(text, runs[0][0])
        results[name] = {"seconds": [s for _, s in runs],
                         "median_s": statistics.median(s for _, s in runs),
                         "word_errors": errors, "reference_words": words,
                         "wer_percent": 100.0 * errors / words, "text": runs[0][0]}
    target.unlink(missing_ok=True)
    return {"clips": len(clips), "pause_s": args.long_pause, "audio_s": seconds,
            "rounds": args.long_rounds, "engines": results}


def main(argv):
    args = parse_args(argv)
    speech, quiet = load_clips(args.corpus, args.language, args.shortest, args.longest)
    extra = load_extra(args.extra) if args.extra else []
    if args.no_quiet:
        quiet = []
    sets = {name: [c for c in speech + extra if c.set == name] for name in SETS}
    sets = {name: clips for name, clips in sets.items() if clips}
    log(f"loading faster-whisper on {args.ct2}")
    engines = {VERBATIM: VerbatimClient(args.discovery, args.language, args.model)}
    for model in filter(None, args.also.split(",")):
        engines[f"{VERBATIM} {model}"] = VerbatimClient(args.discovery, args.language, model,
                                                        override=True)
    engines[FASTER_WHISPER] = FasterWhisper(args.ct2, args.threads, args.language,
                                            args.faster_whisper_vad)
    log("warming up both engines (not timed)")
    for engine in engines.values():
        engine.transcribe(speech[0])
    load_before = os.getloadavg()
    everything = [c for clips in sets.values() for c in clips]
    log(f"timing {len(everything)} speech and {len(quiet)} silence/noise clips, "
        f"{args.rounds} rounds")
    results = run_rounds(engines, everything + quiet, args.rounds, log)
    report = {
        "model": args.model, "engines": list(engines), "language": args.language,
        "rounds": args.rounds,
        "threads": args.threads, "faster_whisper_vad": args.faster_whisper_vad,
        "versions": {"verbatim": args.verbatim_version,
                     "faster_whisper": metadata.version("faster-whisper"),
                     "ctranslate2": metadata.version("ctranslate2")},
        "cpus": os.cpu_count(),
        "speech": {},
        "quiet": {name: summarise_quiet(results[name], quiet) for name in engines},
    }
    for name, clips in sets.items():
        row = {engine: summarise_speech(results[engine], clips, args.rounds)
               for engine in engines}
        row["ratios_verbatim_over_faster_whisper"] = {
            key: row[VERBATIM][key] / row[FASTER_WHISPER][key] for key in RATIO_KEYS}
        row["ratios_over_faster_whisper"] = {
            engine: {key: row[engine][key] / row[FASTER_WHISPER][key] for key in RATIO_KEYS}
            for engine in engines if engine != FASTER_WHISPER}
        report["speech"][name] = row
    # The long file takes every real recording, whatever its length.
    if args.long_from == "real":
        every, _ = load_clips(args.corpus, args.language, 0, float("inf"))
        long_clips = [c for c in every if c.set == "real"]
    else:
        long_clips = sets.get("extra", [])
    if args.long_minutes > 0 and long_clips:
        report["long"] = run_long(args, engines, engines[FASTER_WHISPER].model, long_clips)
    report["load_average"] = {"before": load_before, "after": os.getloadavg()}
    print_report(report, sets, quiet, args.show_texts)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        log(f"results written to {args.json}")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
