"""Streams a WAV file into Verbatim's realtime transcription route and prints what came back.

Usage: realtime_session.py WS_URL API_KEY CASE_JSON

CASE_JSON: {"file": path (16-bit mono WAV), "rate": 24000 or 16000 (the rate the audio is
sent at; the file is resampled by linear interpolation), "speed": 1.0 (1 = real time, 0 = as
fast as possible), "block_ms": 100, "session": {...} (sent in a session.update first, GA shape,
or "beta_session" for transcription_session.update), "commit": false (commit after the audio),
"client": "sdk" (the openai package's realtime client) or "websockets" (the plain package,
with "protocols" and "origin" as a browser would send them), "turns": expected completed
transcripts to wait for, "timeout": seconds}.

Prints one JSON object: {"events": [each server event with "at": seconds since the audio
began], "error": text, if the connection failed}.
"""

import base64
import json
import sys
import threading
import time
import wave


def pcm_at(path, rate):
    with wave.open(path, "rb") as wav:
        assert wav.getsampwidth() == 2 and wav.getnchannels() == 1
        source = wav.getframerate()
        frames = wav.readframes(wav.getnframes())
    samples = [int.from_bytes(frames[i:i + 2], "little", signed=True) for i in range(0, len(frames), 2)]
    if source != rate:
        count = len(samples) * rate // source
        out = []
        for i in range(count):
            x = i * source / rate
            j = int(x)
            k = min(j + 1, len(samples) - 1)
            out.append(int(samples[j] + (samples[k] - samples[j]) * (x - j)))
        samples = out
    return b"".join(s.to_bytes(2, "little", signed=True) for s in samples)


def run(url, key, case):
    rate = case.get("rate", 24000)
    pcm = pcm_at(case["file"], rate) if case.get("file") else b""
    block = rate * 2 * case.get("block_ms", 100) // 1000
    speed = case.get("speed", 1.0)
    events = []
    started = time.monotonic()
    done = threading.Event()
    wanted = case.get("turns", 1)

    if case.get("client", "sdk") == "sdk":
        import openai

        client = openai.OpenAI(api_key=key, websocket_base_url=url)
        manager = client.realtime.connect(extra_query={"intent": "transcription"})
        connection = manager.__enter__()
        send = lambda event: connection.send(event)
        recv = lambda: connection.recv().model_dump(exclude_none=True)
        close = lambda: manager.__exit__(None, None, None)
    else:
        from websockets.sync.client import connect

        headers = {}
        if case.get("origin"):
            headers["Origin"] = case["origin"]
        if case.get("bearer", True) and key:
            headers["Authorization"] = f"Bearer {key}"
        socket = connect(
            url + "/realtime?intent=transcription",
            additional_headers=headers,
            subprotocols=case.get("protocols"),
            max_size=None,
        )
        send = lambda event: socket.send(json.dumps(event))
        recv = lambda: json.loads(socket.recv())
        close = socket.close

    def receive():
        completed = 0
        try:
            while completed < wanted:
                event = recv()
                event["at"] = round(time.monotonic() - started, 3)
                events.append(event)
                if event["type"].endswith("input_audio_transcription.completed") or event["type"].endswith(
                    "input_audio_transcription.failed"
                ):
                    completed += 1
        except Exception as err:  # the server closed: what came is printed
            events.append({"type": "closed", "detail": str(err)})
        done.set()

    reader = threading.Thread(target=receive, daemon=True)
    if "session" in case:
        send({"type": "session.update", "session": case["session"]})
    if "beta_session" in case:
        send({"type": "transcription_session.update", "session": case["beta_session"]})
    reader.start()
    started = time.monotonic()
    for i in range(0, len(pcm), block):
        send({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm[i:i + block]).decode()})
        if speed:
            due = started + (i + block) / (rate * 2) / speed
            time.sleep(max(0.0, due - time.monotonic()))
    for extra in case.get("then", []):
        send(extra)
    if case.get("commit"):
        send({"type": "input_audio_buffer.commit"})
    done.wait(case.get("timeout", 60))
    try:
        close()
    except Exception:
        pass
    return {"events": events}


def main():
    url, key, case = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    try:
        result = run(url, key, case)
    except Exception as err:
        result = {"events": [], "error": f"{type(err).__name__}: {err}"}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
