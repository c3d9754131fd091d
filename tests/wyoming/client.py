"""Talks to a Wyoming speech-to-text server through the `wyoming` package's own AsyncTcpClient,
as Home Assistant does, and prints what it answered as JSON.

    python client.py HOST PORT CASES_JSON

CASES_JSON: a list of cases, run in order; each is one of
  {"describe": true}
  {"utterance": {"wav": PATH, "name": MODEL?, "language": LANG?, "chunk_ms": 20,
                 "realtime": false, "format": {"rate": R, "width": W, "channels": C}?}}
  {"together": [UTTERANCE, ...]}   (each on its own connection, all at once)
  {"ping": TEXT}
An utterance's WAV is sent in the given format (converted by the package's AudioChunkConverter),
one connection per utterance. Its answer: every event's type and data in order, and the
milliseconds from audio-stop to the transcript.
"""

import asyncio
import json
import sys
import time
import wave

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong


async def describe(host, port):
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Describe().event())
        event = await asyncio.wait_for(client.read_event(), 30)
        info = Info.from_event(event)
        return {
            "type": event.type,
            "asr": [
                {
                    "name": program.name,
                    "installed": program.installed,
                    "version": program.version,
                    "streaming": program.supports_transcript_streaming,
                    "attribution": program.attribution.name,
                    "models": [
                        {
                            "name": model.name,
                            "installed": model.installed,
                            "languages": model.languages,
                            "attribution": model.attribution.name,
                            "version": model.version,
                        }
                        for model in program.models
                    ],
                }
                for program in info.asr
            ],
        }


async def ping(host, port, text):
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Ping(text=text).event())
        event = await asyncio.wait_for(client.read_event(), 30)
        return {"type": event.type, "text": Pong.from_event(event).text}


async def utterance(host, port, case):
    with wave.open(case["wav"], "rb") as wav:
        rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
        pcm = wav.readframes(wav.getnframes())
    wanted = case.get("format") or {"rate": rate, "width": width, "channels": channels}
    converter = AudioChunkConverter(**wanted)
    audio = converter.convert(AudioChunk(rate=rate, width=width, channels=channels, audio=pcm)).audio
    frame = wanted["width"] * wanted["channels"]
    step = max(1, int(wanted["rate"] * case.get("chunk_ms", 20) / 1000)) * frame
    events = []
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(
            Transcribe(name=case.get("name"), language=case.get("language")).event()
        )
        await client.write_event(AudioStart(**wanted).event())

        async def read_until_transcript():
            while True:
                event = await client.read_event()
                if event is None:
                    events.append({"type": "closed"})
                    return None
                events.append({"type": event.type, "data": event.data})
                if Transcript.is_type(event.type) or Error.is_type(event.type):
                    return time.monotonic()

        reading = asyncio.create_task(read_until_transcript())
        began = time.monotonic()
        stopped = None
        try:
            for offset in range(0, len(audio), step):
                chunk = audio[offset : offset + step]
                await client.write_event(AudioChunk(audio=chunk, **wanted).event())
                if case.get("realtime"):
                    due = began + (offset + len(chunk)) / frame / wanted["rate"]
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
            await client.write_event(AudioStop().event())
            stopped = time.monotonic()
        except ConnectionError as error:
            events.append({"type": "write-failed", "data": {"text": str(error)}})
        answered = await asyncio.wait_for(reading, 300)
    return {
        "events": events,
        "stop_to_transcript_ms": None
        if answered is None or stopped is None
        else round((answered - stopped) * 1000, 1),
    }


async def main():
    host, port, cases = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    answers = []
    for case in cases:
        if "describe" in case:
            answers.append(await describe(host, port))
        elif "ping" in case:
            answers.append(await ping(host, port, case["ping"]))
        elif "utterance" in case:
            answers.append(await utterance(host, port, case["utterance"]))
        elif "together" in case:
            answers.append(
                await asyncio.gather(*(utterance(host, port, u) for u in case["together"]))
            )
        else:
            raise SystemExit(f"unknown case {case}")
    json.dump(answers, sys.stdout)


asyncio.run(main())
