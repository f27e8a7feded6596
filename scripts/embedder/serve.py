"""A local OpenAI-compatible embeddings endpoint for memgate: POST /v1/embeddings
answered by e5-small-v2 on the CPU, GET /health. memgate's openai embedder talks to it
as to any other provider (MEMGATE_EMBEDDER_BASE_URL=http://127.0.0.1:PORT/v1,
MEMGATE_EMBEDDER_MODEL=e5-small-v2, MEMGATE_EMBEDDER_DIMENSIONS=384), and puts the
prefixes e5 was trained with before what it sends: "query: " before a search query,
"passage: " before everything else (MEMGATE_EMBEDDER_QUERY_PREFIX and
MEMGATE_EMBEDDER_DOCUMENT_PREFIX). The server embeds texts as they come.

The model is the int8 ONNX export of e5-small-v2 run by onnxruntime, its input split
by the model's own WordPiece tokenizer, both read from the model jar fetch_model.py
fetched (--model): mean pooling over the tokens, then unit length, as e5 is used.
Inputs are cut at 512 tokens, the model's length.

Embeddings of texts seen before come from a bounded in-memory cache: the model is
deterministic, and memories repeat themselves (names, places, questions asked again).
"""

import argparse
import base64
import json
import struct
import threading
import zipfile
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MODEL = "e5-small-v2"
DIMENSIONS = 384
MAX_TOKENS = 512
ONNX, TOKENIZER = "e5-small-v2-q.onnx", "e5-small-v2-q-tokenizer.json"  # in the model jar
MAX_INPUTS = 2048  # OpenAI's limit per request
MAX_BODY = 32 << 20
BATCH = 64


class Embedder:
    def __init__(self, model, cache_size, threads):
        with zipfile.ZipFile(model) as z:
            self.tokenizer = Tokenizer.from_str(z.read(TOKENIZER).decode())
            onnx = z.read(ONNX)
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(onnx, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.cache = OrderedDict()
        self.cache_size = cache_size
        self.lock = threading.Lock()  # one forward pass at a time; onnxruntime uses every core

    def forward(self, texts):
        """Unit vectors of texts and the number of tokens read, batch by batch of
        texts of about the same length (less padding)."""
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        vectors = [None] * len(texts)
        tokens = 0
        for start in range(0, len(order), BATCH):
            chunk = order[start:start + BATCH]
            width = max(sum(encodings[i].attention_mask) for i in chunk)
            ids = np.array([encodings[i].ids[:width] for i in chunk], dtype=np.int64)
            mask = np.array([encodings[i].attention_mask[:width] for i in chunk], dtype=np.int64)
            tokens += int(mask.sum())
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for i, v in zip(chunk, pooled):
                vectors[i] = [float(x) for x in v]
        return vectors, tokens

    def embed(self, texts):
        """Unit vectors for texts, and the number of tokens of them the model reads
        (as a provider counts them, those served from the cache included)."""
        with self.lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
            if missing:
                vectors, _ = self.forward(missing)
                for text, vector in zip(missing, vectors):
                    self.cache[text] = vector
            tokens = sum(sum(e.attention_mask) for e in self.tokenizer.encode_batch(texts))
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
    # kept-alive connection delays up to 40 ms.
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
    p.add_argument("--model", required=True, help="the model jar fetch_model.py fetched")
    p.add_argument("--port", type=int, default=8089)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--cache", type=int, default=500_000, help="texts whose embeddings are kept")
    p.add_argument("--threads", type=int, default=0, help="onnxruntime's threads (0: every core)")
    args = p.parse_args()
    Handler.embedder = Embedder(args.model, args.cache, args.threads)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"embedder: ready on http://{args.host}:{args.port}/v1 ({MODEL}, {DIMENSIONS} dimensions)", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
