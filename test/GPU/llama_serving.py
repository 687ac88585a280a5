#!/usr/bin/env python3
"""A Llama decode loop on attn's serving kernels, against transformers.

    python3 test/GPU/llama_serving.py --manifest DIR/attn.manifest
        [--lib build-rt/lib/libattn_runtime.so] [--head-dim 64|128]
        [--prompt-lens 5,17,64,100,129,300] [--steps 64]
        [--page-sizes 16,1,128] [--graphs] [--prefill varlen|dense]
        [--seed N] [--tolerance 3e-2] [--gap-factor 3] [--qk-gain 2]
        [--poison]

DIR/attn.manifest: what `cat examples/gpu/kernels.mlir examples/gpu/paged.mlir
examples/gpu/varlen.mlir | attn-compile - -o DIR` writes (bf16 paged decode
and its combine kernel, bf16 varlen prefill against a paged cache,
bottom-right causal, at the head dim asked for). Needs a CUDA device,
PyTorch and transformers (5.x; no download: the model comes from a config).

The model: a Llama (transformers' LlamaForCausalLM) from a LlamaConfig: 4
layers, hidden 1024, 16 query heads and 4 KV heads (GQA) of --head-dim,
intermediate 2816, vocabulary 32000, default RoPE; random weights from
--seed, bf16, on the GPU. Random weights give scores of std ~0.4 and so
nearly uniform attention, under which a key read from the wrong slot
weighs about as much as the right one: q_proj and k_proj are scaled by
--qk-gain (default 2, scores std ~1.6) so that the attention depends on
which key is where. The prompts are random token ids of --prompt-lens.

Two implementations generate --steps tokens greedily after the prompt
(token 0 from the prompt's last position, then one decode step per token;
steps + 1 tokens per sequence, the cache ending at prompt + steps keys):

  reference  transformers itself, attn_implementation="sdpa", one prompt at
             a time (no padding): the prompt with use_cache=True, then the
             last token with the past_key_values of the step before.
  attn       a forward pass written here over the same model's modules
             (embed_tokens, input_layernorm, q/k/v/o_proj, rotary_emb and
             apply_rotary_pos_emb, post_attention_layernorm, mlp, norm,
             lm_head) in which only the attention is attn's, as a server
             runs it: per layer a paged KV cache in vLLM's layout (pools
             [num_pages, page_size, Hkv, D]) whose pages go to the sequences
             from a free list in random order as they grow, a block table
             [B, max_pages] int32 allocated once for prompt + steps keys,
             and kv_lens [B] int32, both on the device. Prefill packs the
             prompts back to back ([T, H, D], FlashAttention's varlen
             convention, query offsets [B + 1]), writes each sequence's K/V
             rows (after RoPE) into its pages and calls
             Module.forward_varlen against the paged cache (bottom-right
             causal); each decode step appends one K/V row per sequence
             (a new page when it crosses a page boundary), bumps kv_lens on
             the device and calls Module.decode_paged. --graphs replays the
             whole decode step (embedding to logits, attn's kernels
             included) as one CUDA graph captured after the first eager
             step: the lengths and the block table are read from device
             memory, the output and workspace are allocated beforehand.
             --prefill dense runs the prefill with Module.forward on each
             prompt's own K/V instead, to tell a prefill failure from a
             decode one (the decode is unchanged).

The attn path runs twice per page size: free-running (its own argmax
tokens) and teacher-forced (fed the reference's tokens).

Checks. Logit error of a row: max |logits - ref logits|; relative: that
over max |ref logits| of the row.
  teacher-forced  every step of every sequence sees the reference's
                  history, so all (steps + 1) x B rows compare: pass when
                  the largest relative error is below --tolerance (3e-2,
                  what torch_tests.py allows a transformers Llama's logits
                  with attn against sdpa: 2e-2 of one bf16 attention's
                  output, carried through the layers; the two sides also
                  run the same linear layers on differently shaped
                  batches, which rounds differently).
  free-running    greedy decoding of a random-weight model is fragile: its
                  logits are flat (top-2 gaps of a few bf16 steps are
                  common), so two correct bf16 implementations can pick
                  different tokens, after which their histories differ and
                  nothing more compares. Reported: the tokens that agree
                  out of B x (steps + 1), each sequence's first divergence
                  and the first step where any diverges. Pass when the
                  relative logit error of every row up to each sequence's
                  divergence is below --tolerance, and each divergence
                  happens where the reference's top-2 logit gap is below
                  --gap-factor (3) x E, E the typical logit error: the
                  median of the teacher-forced rows' errors (at least one
                  bf16 step at the logits' scale). A flip at step s always
                  has gap <= 2 x that row's error; the criterion asks that
                  the reference was nearly tied there on the scale of the
                  errors seen everywhere else, not that the row was bad.
  bookkeeping     every page of each (exactly sized) pool handed out by
                  the end, and the device's kv_lens equal to the host's
                  count (the graph's replays bump them too).
Also printed: whether the free-running rows equal the teacher-forced ones
bitwise up to the divergence (same inputs; informative), and the time of
the prefill and of the decode steps of both (informative only: the
reference runs one prompt at a time).

Prints a per-step table and a per-sequence table for each page size and a
final PASS or FAIL line; exit status 0 on PASS, 1 on FAIL, 2 when it cannot
run (no device, no transformers, kernels missing from the manifest).
"""

import argparse
import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import attn_runtime  # noqa: E402

DTYPE = torch.bfloat16
DTYPE_NAME = "bf16"


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def pages_for(length, page_size):
    return -(-length // page_size)


def bf16_step(x):
    """The spacing of bf16 numbers at magnitude x (8 significand bits)."""
    _, exponent = math.frexp(max(float(x), 1e-30))  # x = m 2^e, m in [.5, 1)
    return 2.0 ** (exponent - 1 - 7)

#===------------------------------------------------------------------------===#
# The model
#===------------------------------------------------------------------------===#


def build_model(args, device):
    """The Llama of the docstring: random weights from args.seed, bf16, SDPA
    attention (what the reference runs; the attn path uses its modules)."""
    import transformers
    max_len = max(args.prompt_lens) + args.steps
    config = transformers.LlamaConfig(
        vocab_size=args.vocab, hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers, num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads, head_dim=args.head_dim,
        max_position_embeddings=max(2048, max_len),
        attn_implementation="sdpa")
    torch.manual_seed(args.seed)
    model = transformers.LlamaForCausalLM(config).to(device, DTYPE).eval()
    if model.config._attn_implementation != "sdpa":
        raise RuntimeError("the reference runs %s, not sdpa"
                           % model.config._attn_implementation)
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.q_proj.weight.mul_(args.qk_gain)
            layer.self_attn.k_proj.weight.mul_(args.qk_gain)
    return model


def make_prompts(args):
    """Random token ids of the lengths asked for, on the host."""
    gen = torch.Generator()
    gen.manual_seed(args.seed + 1)
    return [torch.randint(0, args.vocab, (n,), generator=gen)
            for n in args.prompt_lens]

#===------------------------------------------------------------------------===#
# The reference: transformers, one prompt at a time
#===------------------------------------------------------------------------===#


def run_reference(model, prompts, steps, device):
    """Greedy decoding by transformers itself: each prompt alone (no
    padding, so no mask can matter), then one token per forward with the
    model's KV cache. Returns {tokens [B, steps + 1] (host), logits
    [steps + 1, B, V] f32 (device): the last position's, step by step,
    prefill_s, decode_s}."""
    b_count, vocab = len(prompts), model.config.vocab_size
    tokens = torch.empty((b_count, steps + 1), dtype=torch.long)
    logits = torch.empty((steps + 1, b_count, vocab), dtype=torch.float32,
                         device=device)
    prefill_s = decode_s = 0.0
    with torch.no_grad():
        for b, prompt in enumerate(prompts):
            ids = prompt.to(device)[None]
            sync(device)
            started = time.perf_counter()
            out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
            row = out.logits[0, -1]
            sync(device)
            prefill_s += time.perf_counter() - started
            cache = out.past_key_values
            started = time.perf_counter()
            for s in range(steps + 1):
                logits[s, b] = row.float()
                token = row.argmax()
                tokens[b, s] = int(token)
                if s == steps:
                    break
                out = model(input_ids=token.view(1, 1), past_key_values=cache,
                            use_cache=True, logits_to_keep=1)
                cache = out.past_key_values
                row = out.logits[0, -1]
            sync(device)
            decode_s += time.perf_counter() - started
    return dict(tokens=tokens, logits=logits, prefill_s=prefill_s,
                decode_s=decode_s)

#===------------------------------------------------------------------------===#
# The paged KV cache's bookkeeping (host side)
#===------------------------------------------------------------------------===#


class PageAllocator:
    """The pages of a pool, handed to sequences from a free list in random
    order, as a server's allocator ends up after requests come and go: a
    kernel that assumed a sequence's pages contiguous or ascending would
    read another sequence's keys. The block table is kept here and copied
    to the device when it changes. Entries a sequence does not own stay 0,
    a valid page: a kernel that read past kv_lens would read real keys of
    another sequence, which the comparison sees, rather than fault."""

    def __init__(self, num_pages, page_size, batch, max_pages, gen):
        self.page_size = page_size
        self.num_pages = num_pages
        self.free = torch.randperm(num_pages, generator=gen).tolist()
        self.table = torch.zeros((batch, max_pages), dtype=torch.int32)
        self.owned = [0] * batch
        self.dirty = True

    def reserve(self, b, length):
        """Gives sequence b the pages that hold `length` keys."""
        need = pages_for(length, self.page_size)
        if need > self.table.shape[1]:
            raise RuntimeError(
                "sequence %d needs %d pages, the block table has %d"
                % (b, need, self.table.shape[1]))
        while self.owned[b] < need:
            if not self.free:
                raise RuntimeError("the pool of %d pages is exhausted"
                                   % self.num_pages)
            self.table[b, self.owned[b]] = self.free.pop()
            self.owned[b] += 1
            self.dirty = True

    def slots(self, b, start, stop):
        """(page, slot) of sequence b's keys [start, stop), as int64 host
        tensors: where its K/V rows go. The pages must be reserved."""
        if pages_for(stop, self.page_size) > self.owned[b]:
            raise RuntimeError("sequence %d owns %d pages, not those of %d "
                               "keys" % (b, self.owned[b], stop))
        pos = torch.arange(start, stop)
        return (self.table[b, pos // self.page_size].long(),
                pos % self.page_size)


def packed_offsets(lengths):
    """FlashAttention's cu_seqlens: [0, l0, l0 + l1, ...], B + 1 entries."""
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    return offsets

#===------------------------------------------------------------------------===#
# The attn path
#===------------------------------------------------------------------------===#


class AttnLlama:
    """The model's forward pass with attn's attention over a paged cache,
    for one batch of sequences. Everything but the attention is the model's
    own modules, so the two paths differ only in the attention and in the
    shapes the linear layers see."""

    def __init__(self, model, module, batch, max_len, num_pages, page_size,
                 prefill_mode, poison, gen):
        from transformers.models.llama.modeling_llama import \
            apply_rotary_pos_emb
        self.rope = apply_rotary_pos_emb
        config = model.config
        self.model = model
        self.module = module
        self.layers = model.model.layers
        self.batch = batch
        self.hq = config.num_attention_heads
        self.hkv = config.num_key_value_heads
        attn = self.layers[0].self_attn
        self.d = getattr(attn, "head_dim", None) or getattr(
            config, "head_dim", config.hidden_size // self.hq)
        # The scale the model's own attention is given.
        self.scale = getattr(attn, "scaling", self.d ** -0.5)
        self.page_size = page_size
        self.prefill_mode = prefill_mode
        device = model.lm_head.weight.device
        self.device = device
        max_pages = pages_for(max_len, page_size)
        self.alloc = PageAllocator(num_pages, page_size, batch, max_pages, gen)
        shape = (num_pages, page_size, self.hkv, self.d)
        # --poison: NaN in every slot no key was written to, where a kernel
        # that loads a partial page's tail and masks it after P V (0 x NaN)
        # would show it. Off by default: servers zero their pools.
        fill = float("nan") if poison else 0.0
        self.k_cache = [torch.full(shape, fill, dtype=DTYPE, device=device)
                        for _ in self.layers]
        self.v_cache = [torch.full(shape, fill, dtype=DTYPE, device=device)
                        for _ in self.layers]
        self.block_table = torch.zeros((batch, max_pages), dtype=torch.int32,
                                       device=device)
        self.kv_lens = torch.zeros(batch, dtype=torch.int32, device=device)
        self.lens = [0] * batch  # the host's count of each sequence's keys
        # The decode step's inputs and outputs, at fixed addresses for the
        # CUDA graph: the next tokens, the logits, attn's output and the
        # workspace (its size depends on the shapes only).
        self.tokens = torch.zeros(batch, dtype=torch.long, device=device)
        self.logits = torch.empty((batch, config.vocab_size), dtype=DTYPE,
                                  device=device)
        self.attn_out = torch.empty((batch, 1, self.hq, self.d), dtype=DTYPE,
                                    device=device)
        self.workspace = module.decode_paged_workspace(
            self.attn_out, self.k_cache[0], self.v_cache[0], self.block_table,
            self.kv_lens, causal=False, scale=self.scale, layout="bshd",
            kv_layout="bshd")
        self.graph = None
        self.capture_s = 0.0

    def _sync_table(self):
        # A pageable host-to-device copy is ordered on the stream after the
        # steps that read the table, and the host tensor is staged before
        # the call returns, so the allocator may change it right after.
        if self.alloc.dirty:
            self.block_table.copy_(self.alloc.table)
            self.alloc.dirty = False

    def prefill(self, prompts):
        """All prompts in one packed forward; writes their K/V into the
        pages and returns the logits of each prompt's last position
        [B, V]."""
        lengths = [len(p) for p in prompts]
        pages, slots = [], []
        for b, n in enumerate(lengths):
            self.alloc.reserve(b, n)
            page, slot = self.alloc.slots(b, 0, n)
            pages.append(page)
            slots.append(slot)
        pages = torch.cat(pages).to(self.device)
        slots = torch.cat(slots).to(self.device)
        self._sync_table()
        self.lens = list(lengths)
        self.kv_lens.copy_(torch.tensor(lengths, dtype=torch.int32))
        offsets = packed_offsets(lengths)
        query_offsets = torch.tensor(offsets, dtype=torch.int32,
                                     device=self.device)
        total = offsets[-1]
        ids = torch.cat(prompts).to(self.device)
        positions = torch.cat([torch.arange(n) for n in lengths])
        positions = positions.to(self.device)[None]  # [1, T]
        x = self.model.model.embed_tokens(ids)  # [T, hidden]
        # As the model does: one (cos, sin) for all layers, [1, T, D].
        cos, sin = self.model.model.rotary_emb(x[None], positions)
        for i, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).view(1, total, self.hq, self.d)
            k = attn.k_proj(h).view(1, total, self.hkv, self.d)
            v = attn.v_proj(h).view(total, self.hkv, self.d)
            # [1, T, H, D]: the heads in dim 2, cos and sin broadcast there.
            q, k = self.rope(q, k, cos, sin, unsqueeze_dim=2)
            q, k = q[0], k[0]
            self.k_cache[i][pages, slots] = k
            self.v_cache[i][pages, slots] = v
            o = self._prefill_attention(i, q, k, v, query_offsets, offsets,
                                        max(lengths))
            x = x + attn.o_proj(o.reshape(total, self.hq * self.d))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        last = query_offsets[1:].long() - 1
        return self.model.lm_head(self.model.model.norm(x[last]))

    def _prefill_attention(self, i, q, k, v, query_offsets, offsets,
                           max_len):
        """q [T, Hq, D] packed; the keys are each prompt's own, already in
        the pages (varlen) or given packed (dense, per prompt)."""
        if self.prefill_mode == "varlen":
            # kv_lens are the prompt lengths: bottom-right alignment puts
            # each prompt's last query on its last key, i.e. causal.
            return self.module.forward_varlen(
                q, self.k_cache[i], self.v_cache[i], query_offsets,
                kv_lens=self.kv_lens, block_table=self.block_table,
                max_seqlen_q=max_len, causal="bottom_right",
                scale=self.scale, layout="bshd", kv_layout="bshd")
        out = torch.empty_like(q)
        for b in range(len(offsets) - 1):
            lo, hi = offsets[b], offsets[b + 1]
            out[lo:hi] = self.module.forward(
                q[lo:hi][None], k[lo:hi][None], v[lo:hi][None], causal=True,
                scale=self.scale, layout="bshd")[0]
        return out

    def _step(self):
        """One decode step on the device alone (no host reads, no
        allocation outside the graph's pool), so that a CUDA graph of it
        serves every step: reads self.tokens, kv_lens and the block table,
        appends a K/V row per sequence, bumps kv_lens, writes self.logits."""
        b_count = self.batch
        pos = self.kv_lens.long()  # a copy: each sequence's new position
        page = torch.gather(self.block_table, 1,
                            (pos // self.page_size)[:, None])[:, 0].long()
        slot = pos % self.page_size
        self.kv_lens.add_(1)
        x = self.model.model.embed_tokens(self.tokens)  # [B, hidden]
        cos, sin = self.model.model.rotary_emb(x[:, None], pos[:, None])
        for i, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).view(b_count, 1, self.hq, self.d)
            k = attn.k_proj(h).view(b_count, 1, self.hkv, self.d)
            v = attn.v_proj(h).view(b_count, self.hkv, self.d)
            q, k = self.rope(q, k, cos, sin, unsqueeze_dim=2)
            self.k_cache[i][page, slot] = k[:, 0]
            self.v_cache[i][page, slot] = v
            # One query per sequence, after its new key: no causal mask.
            o = self.module.decode_paged(
                q, self.k_cache[i], self.v_cache[i], self.block_table,
                self.kv_lens, causal=False, scale=self.scale, layout="bshd",
                kv_layout="bshd", out=self.attn_out, workspace=self.workspace)
            x = x + attn.o_proj(o.view(b_count, self.hq * self.d))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        self.logits.copy_(self.model.lm_head(self.model.model.norm(x)))

    def capture(self):
        """Records _step as a CUDA graph. torch wants a warm-up on a side
        stream first: it runs one step, writing the K/V rows of the step
        about to run (same tokens, same positions: the replay writes them
        again) and logits the replay overwrites; its bump of kv_lens is
        undone. Capturing runs nothing."""
        sync(self.device)
        started = time.perf_counter()
        saved = self.kv_lens.clone()
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            self._step()
        torch.cuda.current_stream(self.device).wait_stream(side)
        self.kv_lens.copy_(saved)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self._step()
        self.graph = graph
        sync(self.device)
        self.capture_s = time.perf_counter() - started

    def decode(self, tokens, capture=False):
        """Appends tokens [B] (device, int64: each sequence's newest token)
        and leaves the next logits in self.logits. The host allocates the
        pages the new keys need before the device step runs."""
        for b in range(self.batch):
            self.alloc.reserve(b, self.lens[b] + 1)
        self._sync_table()
        self.tokens.copy_(tokens)
        if capture:
            self.capture()
        if self.graph is not None:
            self.graph.replay()
        else:
            self._step()
        self.lens = [n + 1 for n in self.lens]


def run_attn(model, module, prompts, steps, page_size, args, device,
             forced=None):
    """The attn path, free-running (forced=None) or fed forced [B,
    steps + 1] (the reference's tokens, on the device). Returns {tokens
    [B, steps + 1] (host), logits [steps + 1, B, V] f32 (device),
    prefill_s, decode_s, capture_s, book: bookkeeping errors}."""
    b_count = len(prompts)
    lengths = [len(p) for p in prompts]
    final = [n + steps for n in lengths]  # keys per sequence at the end
    num_pages = sum(pages_for(n, page_size) for n in final)
    gen = torch.Generator()
    gen.manual_seed(args.seed * 1009 + page_size * 2 + (forced is not None))
    engine = AttnLlama(model, module, b_count, max(final), num_pages,
                       page_size, args.prefill, args.poison, gen)
    vocab = model.config.vocab_size
    logits = torch.empty((steps + 1, b_count, vocab), dtype=torch.float32,
                         device=device)
    chosen = torch.empty((steps + 1, b_count), dtype=torch.long,
                         device=device)
    with torch.no_grad():
        sync(device)
        started = time.perf_counter()
        first = engine.prefill(prompts)
        sync(device)
        prefill_s = time.perf_counter() - started
        logits[0] = first.float()
        chosen[0] = first.argmax(-1)
        # No host read in the loop: the allocator's work depends on the
        # lengths only, which the host counts itself.
        started = time.perf_counter()
        for s in range(1, steps + 1):
            feed = chosen[s - 1] if forced is None else forced[:, s - 1]
            engine.decode(feed, capture=args.graphs and s == 2)
            logits[s] = engine.logits.float()
            chosen[s] = engine.logits.argmax(-1)
        sync(device)
        decode_s = time.perf_counter() - started - engine.capture_s
    book = []
    if engine.lens != final:
        book.append("host lengths %s, expected %s" % (engine.lens, final))
    device_lens = engine.kv_lens.tolist()
    if device_lens != final:
        book.append("device kv_lens %s, expected %s" % (device_lens, final))
    if engine.alloc.free:
        book.append("%d of %d pages never handed out"
                    % (len(engine.alloc.free), num_pages))
    return dict(tokens=chosen.t().cpu(), logits=logits, prefill_s=prefill_s,
                decode_s=decode_s, capture_s=engine.capture_s, book=book,
                pages=list(engine.alloc.owned), num_pages=num_pages)

#===------------------------------------------------------------------------===#
# Comparison
#===------------------------------------------------------------------------===#


def first_divergence(tokens, ref_tokens):
    """Per sequence, the first step whose token differs, or None."""
    out = []
    for row, ref_row in zip(tokens.tolist(), ref_tokens.tolist()):
        out.append(next((s for s, (a, r) in enumerate(zip(row, ref_row))
                         if a != r), None))
    return out


def compare(ref, free, forced, args):
    """The checks of the docstring for one page size: a dict of per-step and
    per-sequence numbers and the verdicts."""
    steps_1, b_count, _ = ref["logits"].shape
    scale = ref["logits"].abs().amax(-1)  # [steps + 1, B]
    top2 = ref["logits"].topk(2, dim=-1).values
    gap = (top2[..., 0] - top2[..., 1])  # the reference's top-2 gap
    tf_err = (forced["logits"] - ref["logits"]).abs().amax(-1)
    tf_rel = tf_err / scale
    fr_err = (free["logits"] - ref["logits"]).abs().amax(-1)
    fr_rel = fr_err / scale
    # NaN anywhere must fail: comparisons with NaN are False, so the
    # verdicts below are written as "x <= bound".
    finite = bool(torch.isfinite(forced["logits"]).all()) and bool(
        torch.isfinite(free["logits"]).all())
    div = first_divergence(free["tokens"], ref["tokens"])
    # Rows of the free run that saw the reference's history: steps up to
    # and including each sequence's divergence.
    comparable = torch.zeros((steps_1, b_count), dtype=torch.bool)
    for b, d in enumerate(div):
        comparable[:(steps_1 if d is None else d + 1), b] = True
    comparable = comparable.to(fr_err.device)
    typical = max(float(tf_err.median()), bf16_step(float(scale.median())))
    flips = []
    for b, d in enumerate(div):
        if d is None:
            continue
        g, e = float(gap[d, b]), float(fr_err[d, b])
        flips.append(dict(seq=b, step=d, gap=g, err=e,
                          ok=g <= args.gap_factor * typical))
    fr_rel_max = float(fr_rel[comparable].max())
    same = float((free["logits"] - forced["logits"]).abs().amax(-1)
                 [comparable].max())
    agree = int((free["tokens"] == ref["tokens"]).sum())
    tf_agree = int((forced["tokens"] == ref["tokens"]).sum())
    tf_rel_max = float(tf_rel.max())
    tf_ok = finite and tf_rel_max <= args.tolerance
    fr_ok = (finite and fr_rel_max <= args.tolerance
             and all(f["ok"] for f in flips))
    return dict(scale=scale, gap=gap, tf_err=tf_err, tf_rel=tf_rel,
                fr_rel=fr_rel, comparable=comparable, div=div, flips=flips,
                typical=typical, fr_rel_max=fr_rel_max, same=same,
                agree=agree, tf_agree=tf_agree, tf_rel_max=tf_rel_max,
                tf_ok=tf_ok, fr_ok=fr_ok, finite=finite,
                total=steps_1 * b_count)


def shown_steps(steps, every, div):
    rows = set(range(0, steps + 1, max(1, every))) | {steps}
    rows |= {d for d in div if d is not None}
    return sorted(rows)


def print_tables(c, free, prompts, args):
    steps = c["tf_err"].shape[0] - 1
    print("  step | teacher-forced      | free-running                "
          "  | ref")
    print("       | max|dlogit|     rel | agree  diverged  rel (undiv.) | "
          "min top-2 gap")
    div = c["div"]
    for s in shown_steps(steps, args.table_every, div):
        tokens_ok = int((free["tokens"][:, s] ==
                         c["ref_tokens"][:, s]).sum())
        diverged = sum(1 for d in div if d is not None and d <= s)
        mask = c["comparable"][s]
        rel = "%11.2e" % float(c["fr_rel"][s][mask].max()) if bool(
            mask.any()) else "%11s" % "-"
        print("  %4d | %11.4f %7.1e | %3d/%-3d %7d %s | %13.4f%s" % (
            s, float(c["tf_err"][s].max()), float(c["tf_rel"][s].max()),
            tokens_ok, len(div), diverged, rel, float(c["gap"][s].min()),
            "  <- divergence" if s in div else ""))
    print("   seq prompt  keys pages | TF rel max | free-running")
    flips = {f["seq"]: f for f in c["flips"]}
    for b, prompt in enumerate(prompts):
        f = flips.get(b)
        if f is None:
            what = "agrees at every step"
        else:
            what = ("diverges at step %d: ref top-2 gap %.4f %s %g x %.4f, "
                    "|dlogit| there %.4f" % (
                        f["step"], f["gap"], "<=" if f["ok"] else ">",
                        args.gap_factor, c["typical"], f["err"]))
        print("  %4d %6d %5d %5d | %10.2e | %s" % (
            b, len(prompt), len(prompt) + steps, free["pages"][b],
            float(c["tf_rel"][:, b].max()), what))

#===------------------------------------------------------------------------===#
# Driver
#===------------------------------------------------------------------------===#


def kernel_records(module, head_dim, prefill_mode):
    """The kernel records the attn path needs, by role, and the roles the
    manifest has no kernel for."""
    d = head_dim
    found = dict(
        decode_partial=module.has_kernel("decode_partial", DTYPE_NAME, d, d,
                                         "none", paged=True),
        decode_combine=module.has_kernel("decode_combine", DTYPE_NAME, None,
                                         d))
    if prefill_mode == "varlen":
        found["prefill"] = module.has_kernel(
            "forward", DTYPE_NAME, d, d, "bottom_right", packed=True,
            paged=True)
    else:
        found["prefill"] = module.has_kernel("forward", DTYPE_NAME, d, d,
                                             "top_left")
    return found, [role for role, record in found.items() if record is None]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--lib", default=None, help="libattn_runtime.so")
    parser.add_argument("--head-dim", type=int, default=128,
                        choices=(64, 128))
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=2816)
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--prompt-lens", default="5,17,64,100,129,300",
                        help="comma-separated prompt lengths (the batch)")
    parser.add_argument("--steps", type=int, default=64,
                        help="decode steps after the prompt")
    parser.add_argument("--page-sizes", default="16,1,128",
                        help="comma-separated page sizes, each a run of the "
                             "attn path (16 first: vLLM's default)")
    parser.add_argument("--graphs", action="store_true",
                        help="replay the decode step as a CUDA graph after "
                             "the first eager one")
    parser.add_argument("--prefill", choices=("varlen", "dense"),
                        default="varlen",
                        help="varlen: Module.forward_varlen on the paged "
                             "cache; dense: Module.forward per prompt")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--qk-gain", type=float, default=2.0,
                        help="scale of q_proj and k_proj (sharper attention)")
    parser.add_argument("--tolerance", type=float, default=3e-2,
                        help="largest relative logit error, bf16")
    parser.add_argument("--gap-factor", type=float, default=3.0,
                        help="a divergence passes where the reference's "
                             "top-2 gap is at most this x the typical error")
    parser.add_argument("--table-every", type=int, default=8,
                        help="print every Nth step (and the divergences)")
    parser.add_argument("--baseline", action="store_true",
                        help="also run the reference with transformers' "
                             "eager attention and report how its greedy "
                             "tokens drift from sdpa's (bf16 noise between "
                             "two correct implementations)")
    parser.add_argument("--poison", action="store_true",
                        help="fill unwritten cache slots with NaN")
    args = parser.parse_args(argv)
    try:
        args.prompt_lens = [int(x) for x in args.prompt_lens.split(",") if x]
        args.page_sizes = [int(x) for x in args.page_sizes.split(",") if x]
    except ValueError as e:
        parser.error(str(e))
    if not args.prompt_lens or min(args.prompt_lens) < 1:
        parser.error("--prompt-lens: at least one length, each >= 1")
    if not args.page_sizes or min(args.page_sizes) < 1:
        parser.error("--page-sizes: at least one size, each >= 1")
    if args.steps < 0:
        parser.error("--steps must be >= 0")
    if args.heads % args.kv_heads:
        parser.error("--heads must be a multiple of --kv-heads")
    return args


def run(args, module, device):
    """Everything after the setup; returns the exit status."""
    model = build_model(args, device)
    prompts = make_prompts(args)
    b_count = len(prompts)
    ref = run_reference(model, prompts, args.steps, device)
    ref_tokens_dev = ref["tokens"].to(device)
    print("reference (transformers, sdpa, one prompt at a time): prefill "
          "%.1f ms, decode %.1f ms (%d x %d single-token forwards)"
          % (ref["prefill_s"] * 1e3, ref["decode_s"] * 1e3, b_count,
             args.steps), flush=True)
    if args.baseline:
        # How far two correct implementations drift apart in bf16: the same
        # model with transformers' eager attention, free-running, against
        # the sdpa reference (informative; it does not decide the verdict).
        model.config._attn_implementation = "eager"
        other = run_reference(model, prompts, args.steps, device)
        model.config._attn_implementation = "sdpa"
        agree = int((other["tokens"] == ref["tokens"]).sum())
        first = first_divergence(other["tokens"], ref["tokens"])
        firsts = [d for d in first if d is not None]
        print("baseline (transformers eager vs sdpa, free-running): tokens "
              "agree %d/%d, first divergence %s, per sequence %s" % (
                  agree, ref["tokens"].numel(),
                  "none" if not firsts else "at step %d" % min(firsts),
                  ",".join("-" if d is None else str(d) for d in first)),
              flush=True)
        del other
    verdicts = []
    for page_size in args.page_sizes:
        free = run_attn(model, module, prompts, args.steps, page_size, args,
                        device)
        forced = run_attn(model, module, prompts, args.steps, page_size,
                          args, device, forced=ref_tokens_dev)
        c = compare(ref, free, forced, args)
        c["ref_tokens"] = ref["tokens"]
        print("\npage size %d: pool of %d pages per layer and tensor; attn "
              "prefill %.1f ms (%s), decode %.1f ms for %d steps (%.3f "
              "ms/step%s)" % (
                  page_size, free["num_pages"], free["prefill_s"] * 1e3,
                  "forward_varlen, one packed call per layer"
                  if args.prefill == "varlen" else "forward per prompt",
                  free["decode_s"] * 1e3, args.steps,
                  free["decode_s"] * 1e3 / max(1, args.steps),
                  ", CUDA graph after step 1, capture %.1f ms"
                  % (free["capture_s"] * 1e3) if args.graphs else ", eager"),
              flush=True)
        print_tables(c, free, prompts, args)
        book = free["book"] + forced["book"]
        first = min((d for d in c["div"] if d is not None), default=None)
        print("  teacher-forced: max rel logit error %.2e (tolerance %.0e), "
              "tokens agree %d/%d: %s" % (
                  c["tf_rel_max"], args.tolerance, c["tf_agree"], c["total"],
                  "ok" if c["tf_ok"] else "FAIL"))
        print("  free-running: tokens agree %d/%d, first divergence %s, "
              "max rel logit error before divergence %.2e; typical logit "
              "error %.4f: %s" % (
                  c["agree"], c["total"],
                  "none" if first is None else "at step %d" % first,
                  c["fr_rel_max"], c["typical"],
                  "ok" if c["fr_ok"] else "FAIL"))
        print("  free-running rows equal to teacher-forced ones before "
              "divergence: %s" % ("bitwise" if c["same"] == 0 else
                                  "within %.2e" % c["same"]))
        if not c["finite"]:
            print("  non-finite logits in the attn path")
        for line in book:
            print("  bookkeeping: " + line)
        ok = c["tf_ok"] and c["fr_ok"] and not book
        verdicts.append((page_size, ok))
        del free, forced, c
        if device.type == "cuda":
            torch.cuda.empty_cache()
    failed = [p for p, ok in verdicts if not ok]
    print("\n%s: Llama (%d layers, Hq %d, Hkv %d, D %d) on attn's paged "
          "kernels, %d prompts of %s tokens + %d decode steps, page sizes %s"
          "%s%s" % (
              "FAIL" if failed else "PASS", args.layers, args.heads,
              args.kv_heads, args.head_dim, b_count,
              ",".join(map(str, args.prompt_lens)), args.steps,
              ",".join(map(str, args.page_sizes)),
              ", CUDA graphs" if args.graphs else "",
              "; prefill by forward per prompt (forward_varlen not run)"
              if args.prefill == "dense" else ""))
    return 1 if failed else 0


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device visible to torch")
        return 2
    try:
        import transformers
    except ImportError:
        print("transformers is not installed")
        return 2
    device = torch.device("cuda", torch.cuda.current_device())
    module = attn_runtime.Module(args.manifest, lib=args.lib)
    props = torch.cuda.get_device_properties(device)
    print("device: %s (sm_%d%d), torch %s, transformers %s; manifest %s "
          "(section %s)" % (props.name, props.major, props.minor,
                            torch.__version__, transformers.__version__,
                            module.manifest_path, module.target))
    if args.prefill == "varlen" and not hasattr(module, "forward_varlen"):
        print("python/attn_runtime.py has no Module.forward_varlen: run "
              "with --prefill dense to check the decode alone")
        return 2
    found, missing = kernel_records(module, args.head_dim, args.prefill)
    if missing:
        print("the manifest has no %s kernel for %s D %d (%s): compile "
              "examples/gpu/kernels.mlir, paged.mlir and varlen.mlir into it"
              % (", ".join(missing), DTYPE_NAME, args.head_dim,
                 "bottom-right varlen prefill on a paged cache, paged decode"
                 if args.prefill == "varlen"
                 else "top-left forward, paged decode"))
        return 2
    print("kernels: %s" % ", ".join(r["name"] for r in found.values()))
    return run(args, module, device)


if __name__ == "__main__":
    sys.exit(main())
