"""Drives Verbatim's OpenAI-compatible routes with the official `openai` Python package.

Usage: sdk_cases.py BASE_URL API_KEY CASES_JSON

CASES_JSON is a list of cases, each {"name", "route": "transcriptions"|"translations", "file",
plus any keyword arguments of `create` (model, response_format, timestamp_granularities, stream,
language, prompt, temperature)} and optionally "api_key" to override the key. Prints one JSON
object: for each case name, {"value": ...} (the SDK's answer as JSON: a model dump, a string, or
for a stream the list of its events) or {"error": {"class", "status", "body", "message"}}.
"""

import json
import sys

import openai


def run_case(client, case):
    case = dict(case)
    name = case.pop("name")
    route = case.pop("route")
    path = case.pop("file")
    key = case.pop("api_key", None)
    if key is not None:
        client = client.with_options(api_key=key)
    api = client.audio.transcriptions if route == "transcriptions" else client.audio.translations
    case.setdefault("model", "whisper-1")
    try:
        with open(path, "rb") as audio:
            answer = api.create(file=audio, **case)
            if case.get("stream"):
                value = [event.model_dump(exclude_none=True) for event in answer]
            elif isinstance(answer, str):
                value = answer
            else:
                value = answer.model_dump(exclude_none=True)
        return name, {"value": value}
    except openai.APIStatusError as err:
        return name, {
            "error": {
                "class": type(err).__name__,
                "status": err.status_code,
                "body": err.body,
                "message": err.message,
            }
        }
    except openai.APIError as err:
        return name, {"error": {"class": type(err).__name__, "body": err.body, "message": err.message}}


def main():
    base_url, api_key, cases = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=600)
    results = dict(run_case(client, case) for case in cases)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
