//===- attn-runtime-test.cpp - the runtime's checks, without a GPU --------===//
//
// Drives the runtime's manifest parser, PTX checks, argument checks and
// launch plans (lib/Runtime/Manifest.h, Plan.h) on fake device pointers, and
// attn_module_load up to the point where it needs the driver. Each case
// prints one line, "<case>: <status>: <message>", or the launch it plans;
// the .test files in this directory FileCheck them.
//
// Usage: attn-runtime-test manifest|ptx|forward|mask|tma|decode|paged|
//        balanced|varlen|backward|backward-atomic|backward-ordered|
//        backward-tma|mod FILE|load DIR|launch FILE|launch-tma FILE|
//        launch-multi FILE|launch-backward FILE|launch-backward-tma FILE|
//        launch-atomic-dq FILE|launch-ordered-dq FILE|
//        launch-paged FILE|launch-varlen FILE|launch-mod FILE|blocks FILE|
//        launch-blocks FILE|mod-operands FILE|launch-mod-operands FILE|
//        checked PAGED VARLEN|fuzz FILE CASES SEED
//
//===----------------------------------------------------------------------===//

#include "attn-runtime/attn_runtime.h"

#include "Error.h"
#include "Manifest.h"
#include "Plan.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include <dlfcn.h>
#include <sys/stat.h>

using namespace attn::runtime;

namespace {

void report(const char *name, attn_status status) {
  std::printf("%s: %s: %s\n", name, statusName(status),
              status == ATTN_OK ? "" : attn_last_error());
}

/// Parses the test manifest `text` into `out`; false, having said why, when
/// it fails.
bool setUp(const std::string &text, Manifest &out) {
  if (!parseManifest(text, "m.manifest", out))
    return true;
  std::printf("setup failed: %s\n", attn_last_error());
  return false;
}

/// Parses the manifest file `manifest` into `parsed` and the plain test
/// module kModule (below) into `plain`; false, having said why, when
/// either fails.
bool setUpFileAndPlain(const std::string &manifest, Manifest &parsed,
                       Manifest &plain);

/// Plans the call of `a` (ForwardArgs, DecodeArgs... below: each names its
/// plan type) against `m` and reports its status under `name`.
template <typename Args>
void planCase(const ManifestSection &m, const char *name, const Args &a) {
  typename Args::Plan plan;
  report(name, a.plan(m, plan));
}

/// One case of a call's argument checks: its name, and what it changes in
/// the default arguments.
template <typename Args>
using ArgsCase = std::pair<const char *, std::function<void(Args &)>>;

/// planCase for each case, in order, on default arguments changed as the
/// case says.
template <typename Args>
void planCases(const ManifestSection &m,
               std::initializer_list<ArgsCase<Args>> cases) {
  for (const auto &[name, change] : cases) {
    Args a;
    change(a);
    planCase(m, name, a);
  }
}

/// The dtype checks of q, v, o and lse that the calls taking them make, in
/// this order: an integer q, v not of q's dtype, o an integer or not of q's
/// dtype, lse an integer or not f32.
template <typename Args> void tensorDtypeCases(const ManifestSection &m) {
  planCases<Args>(
      m, {
             {"dtype-q-i32", [](Args &a) { a.q.dtype = ATTN_I32; }},
             {"dtype-v", [](Args &a) { a.v.dtype = ATTN_F16; }},
             {"dtype-o-i32", [](Args &a) { a.o.dtype = ATTN_I32; }},
             {"dtype-o", [](Args &a) { a.o.dtype = ATTN_F16; }},
             {"dtype-lse-i32", [](Args &a) { a.lse.dtype = ATTN_I32; }},
             {"dtype-lse", [](Args &a) { a.lse.dtype = ATTN_BF16; }},
         });
}

/// The checks of attn_options that every call makes, in the order they
/// come: a window without a causal kind, a causal kind past the enum, a
/// scale that is not finite.
template <typename Args> void optionCases(const ManifestSection &m) {
  planCases<Args>(
      m, {
             {"window-without-causal", [](Args &a) { a.options.window = 64; }},
             {"causal-enum",
              [](Args &a) { a.options.causal = static_cast<attn_causal>(7); }},
             {"scale-nan", [](Args &a) { a.options.scale = NAN; }},
         });
}

//===----------------------------------------------------------------------===//
// Manifests
//===----------------------------------------------------------------------===//

const char *kHeader = "attn-manifest 1\ntarget sm_90a\nptx kernels.ptx\n";

const char *kFwd = "kernel k kind=forward dtype=bf16 head_dim=128 "
                   "value_dim=128 causal=none block_q=128 block_kv=64 "
                   "threads=256 smem=73728";

/// The manifest of the forward and decode cases.
const char *kModule =
    "# kernels for the runtime tests\n"
    "attn-manifest 1\n"
    "target sm_90a\n"
    "ptx kernels.ptx\n"
    "kernel fwd_bf16_128_none kind=forward dtype=bf16 head_dim=128 "
    "value_dim=128 causal=none block_q=128 block_kv=64 threads=256 "
    "smem=73728\n"
    "kernel fwd_bf16_128_tl kind=forward dtype=bf16 head_dim=128 "
    "value_dim=128 causal=top_left block_q=128 block_kv=64 threads=256 "
    "smem=73728\n"
    "kernel fwd_bf16_128_br kind=forward dtype=bf16 head_dim=128 "
    "value_dim=128 causal=bottom_right block_q=128 block_kv=64 threads=256 "
    "smem=73728\n"
    "kernel fwd_f16_64_none kind=forward dtype=f16 head_dim=64 value_dim=64 "
    "causal=none block_q=64 block_kv=64 threads=128 smem=32768\n"
    "kernel dec_bf16_128_none kind=decode_partial dtype=bf16 head_dim=128 "
    "value_dim=128 causal=none rows=16 block_kv=64 threads=128 smem=36864\n"
    "kernel dec_bf16_128_br kind=decode_partial dtype=bf16 head_dim=128 "
    "value_dim=128 causal=bottom_right rows=16 block_kv=64 threads=128 "
    "smem=36864\n"
    "kernel comb_bf16_128 kind=decode_combine dtype=bf16 value_dim=128 "
    "rows=16 block_kv=16 threads=32 smem=0\n";

void parseCase(const char *name, const std::string &text) {
  Manifest m;
  report(name, parseManifest(text, "m.manifest", m));
}

/// Each kernel of the first section: its line, name, ABI, parameter count
/// and tensor-map boxes.
void printTmaKernels(const Manifest &m) {
  for (const KernelSpec &k : m.sections.front().kernels) {
    std::printf("  line %d: %s (%s) params=%zu tma=", k.line, k.name.c_str(),
                abiName(k).c_str(), abiParamSizes(k).size());
    for (const TmaBox &b : k.tma)
      std::printf("%s:%lldx%lld:%lld ", b.tensor.c_str(),
                  static_cast<long long>(b.rows),
                  static_cast<long long>(b.cols),
                  static_cast<long long>(b.swizzle));
    std::printf("\n");
  }
}

/// Manifests of several sections, one per target: the errors, a valid one,
/// and the section the runtime chooses for each compute capability.
int runSections() {
  const std::string v = "attn-manifest 1\n";
  const std::string fwd = std::string(kFwd) + "\n";
  const std::string s90 = "target sm_90a\nptx k90.ptx\n";
  const std::string s80 = "target sm_80\nptx k80.ptx\n";
  parseCase("section-no-ptx", v + "target sm_90a\n" + fwd + s80 + fwd);
  parseCase("section-no-kernels", v + s90 + s80 + fwd);
  parseCase("last-section-no-ptx", v + s90 + fwd + "target sm_80\n" + fwd);
  parseCase("last-section-no-kernels", v + s90 + fwd + s80);
  parseCase("ptx-before-target", v + "ptx k.ptx\n" + s90 + fwd);
  parseCase("kernel-before-target", v + fwd + s90 + fwd);
  parseCase("section-second-ptx", v + s90 + fwd + s80 + "ptx k.ptx\n" + fwd);
  parseCase("section-same-target", v + s90 + fwd + s80 + fwd + s90 + fwd);
  parseCase("section-bad-target", v + s90 + fwd + "target sm_8x\n");
  // Kernel names and specialisations are unique within a section (checked
  // when the next section starts, or at the end), not across sections.
  parseCase("section-duplicate-name", v + s90 + fwd + fwd + s80 + fwd);
  parseCase("last-section-duplicate-name", v + s90 + fwd + s80 + fwd + fwd);
  parseCase("section-duplicate-config",
            v + s90 + fwd + s80 + fwd +
                "kernel k2 kind=forward dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none block_q=64 block_kv=32 "
                "threads=128 smem=0\n");
  {
    Manifest m;
    report("sections-valid",
           parseManifest(v + "# one section per chip\n" + s90 + fwd +
                             "kernel k_tl kind=forward dtype=bf16 "
                             "head_dim=128 value_dim=128 causal=top_left "
                             "block_q=128 block_kv=64 threads=256 smem=0\n" +
                             "kernel k_other kind=decode_combine dtype=bf16 "
                             "value_dim=128 rows=4 threads=128 smem=0\n" +
                             "\ntarget sm_80\n" +
                             "kernel k kind=forward dtype=bf16 "
                             "head_dim=128 value_dim=128 causal=none "
                             "block_q=64 block_kv=64 threads=128 smem=0\n" +
                             "ptx k80.ptx\n",
                         "m.manifest", m));
    for (const ManifestSection &section : m.sections) {
      std::printf("  line %d: target=%s ptx=%s kernels=", section.line,
                  section.target.c_str(), section.ptxFile.c_str());
      for (const KernelSpec &k : section.kernels)
        std::printf("%s(line %d,threads=%lld) ", k.name.c_str(), k.line,
                    static_cast<long long>(k.threads));
      std::printf("\n");
    }
  }
  // The choice: of the targets that run on the device (sm_NNa on exactly
  // sm_NN, sm_NN on sm_NN and later), the arch-specific one, else the
  // highest; the order of the sections does not matter.
  const char *manifests[] = {"sm_90a sm_80", "sm_80 sm_90a sm_86 sm_100a",
                             "sm_90a", "sm_80", "sm_90 sm_90a"};
  for (const char *targets : manifests) {
    std::string text = v;
    for (const char *t = targets; *t;) {
      const char *end = std::strchr(t, ' ');
      std::string target(t, end ? end - t : std::strlen(t));
      text += "target " + target + "\nptx k." + target + ".ptx\n" + fwd;
      t = end ? end + 1 : t + target.size();
    }
    Manifest m;
    if (parseManifest(text, "m.manifest", m)) {
      std::printf("choose: %s\n", attn_last_error());
      return 1;
    }
    std::printf("choose %s:", m.describeTargets().c_str());
    for (int sm : {75, 80, 86, 89, 90, 100, 103, 120}) {
      const ManifestSection *section = m.chooseSection(sm);
      std::printf(" %d=%s", sm, section ? section->target.c_str() : "none");
    }
    std::printf("\n");
  }
  return 0;
}

int runManifest() {
  std::string h = kHeader;
  std::string fwd = kFwd;
  parseCase("empty", "");
  parseCase("comments-only", "# nothing here\n\n");
  parseCase("no-header", "target sm_90a\n");
  parseCase("version", "attn-manifest 2\n");
  parseCase("version-syntax", "attn-manifest one\n");
  parseCase("second-header", h + "attn-manifest 1\n");
  parseCase("unknown-record", h + "kernels x\n");
  parseCase("bad-target", "attn-manifest 1\ntarget gfx90a\n");
  parseCase("second-ptx", h + "ptx other.ptx\n");
  parseCase("ptx-syntax", "attn-manifest 1\nptx a.ptx b.ptx\n");
  parseCase("missing-target", "attn-manifest 1\n# no sections\n");
  parseCase("missing-ptx", "attn-manifest 1\ntarget sm_80\n" + fwd + "\n");
  parseCase("no-kernels", h);
  parseCase("kernel-name", h + "kernel 9k kind=forward\n");
  parseCase("kernel-no-name", h + "kernel\n");
  parseCase("not-key-value", h + "kernel k kind\n");
  parseCase("unknown-key", h + fwd + " foo=1\n");
  parseCase("duplicate-key", h + fwd + " dtype=f16\n");
  parseCase("missing-kind", h + "kernel k dtype=bf16\n");
  parseCase("missing-key",
            h + "kernel k kind=forward dtype=bf16 head_dim=128 value_dim=128 "
                "causal=none block_kv=64 threads=256 smem=0\n");
  parseCase("missing-rows",
            h + "kernel c kind=decode_combine dtype=bf16 value_dim=128 "
                "threads=128 smem=0\n");
  parseCase("bad-kind", h + "kernel k kind=backward\n");
  parseCase("bad-dtype", h + "kernel k kind=forward dtype=fp8\n");
  parseCase("bad-causal", h + "kernel k kind=forward causal=left\n");
  parseCase("bad-int", h + "kernel k kind=forward threads=12x\n");
  parseCase("negative-int", h + "kernel k kind=forward head_dim=-64\n");
  parseCase("zero", h + "kernel k kind=forward block_kv=0\n");
  parseCase("too-many-threads",
            h + "kernel k kind=forward dtype=bf16 head_dim=128 value_dim=128 "
                "causal=none block_q=128 block_kv=64 threads=2048 smem=0\n");
  parseCase("head-dim-limit",
            h + "kernel k kind=forward dtype=bf16 head_dim=100000 "
                "value_dim=128 causal=none block_q=128 block_kv=64 "
                "threads=256 smem=0\n");
  parseCase("block-kv-limit",
            h + "kernel k kind=forward dtype=bf16 head_dim=128 value_dim=128 "
                "causal=none block_q=128 block_kv=999999999999 threads=256 "
                "smem=0\n");
  parseCase("duplicate-name", h + fwd + "\n" + fwd + "\n");
  parseCase("duplicate-config",
            h + fwd + "\n" +
                "kernel k2 kind=forward dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none block_q=64 block_kv=32 "
                "threads=128 smem=0\n");

  // The mask key (forward only; absent means none).
  parseCase("bad-mask", h + fwd + " mask=causal\n");
  parseCase("duplicate-mask-key", h + fwd + " mask=add mask=bool\n");
  parseCase("mask-decode",
            h + "kernel d kind=decode_partial dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none rows=16 block_kv=64 threads=128 "
                "smem=0 mask=add\n");
  parseCase("mask-combine",
            h + "kernel c mask=bool kind=decode_combine dtype=bf16 "
                "value_dim=128 rows=4 threads=128 smem=0\n");
  // The grid key: tiles (the default) or persistent, forward only.
  parseCase("bad-grid", h + fwd + " grid=cluster\n");
  parseCase("grid-decode",
            h + "kernel d kind=decode_partial dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none rows=16 block_kv=64 threads=128 "
                "smem=0 grid=persistent\n");
  // value_blocks: forward, decode_partial, backward_kv and backward_q, at
  // most 64 and value_dim / 8, never with a persistent grid, nor with
  // tensor maps but in the backward (below).
  parseCase("value-blocks-combine",
            h + "kernel c kind=decode_combine dtype=bf16 value_dim=512 "
                "rows=16 threads=32 smem=0 value_blocks=2\n");
  parseCase("value-blocks-dot",
            h + "kernel d kind=backward_dot dtype=bf16 head_dim=512 "
                "value_dim=512 causal=none block_q=64 block_kv=64 threads=128 "
                "smem=0 value_blocks=2\n");
  parseCase("value-blocks-many", h + fwd + " value_blocks=17\n");
  parseCase("value-blocks-zero", h + fwd + " value_blocks=0\n");
  parseCase("value-blocks-persistent",
            h + fwd + " value_blocks=2 grid=persistent\n");
  parseCase("value-blocks-tma",
            h + fwd + " value_blocks=2 tma=q:128x64:128,k:64x64:128,"
                      "v:64x32:64\n");
  // The params key the compiler writes: checked against this runtime's ABI
  // (attn_kernel_abi.def), name, type and rank of every parameter in order.
  const std::string fwdParams = "q:memref4,k:memref4,v:memref4,o:memref4,"
                                "lse:memref3,scale_log2:f32,window:i64";
  parseCase("params-order",
            h + fwd +
                " params=k:memref4,q:memref4,v:memref4,o:memref4,"
                "lse:memref3,scale_log2:f32,window:i64\n");
  parseCase("params-rank", h + fwd +
                               " params=q:memref4,k:memref4,v:memref4,"
                               "o:memref4,lse:memref4,scale_log2:f32,"
                               "window:i64\n");
  parseCase("params-empty", h + fwd + " params=\n");
  parseCase("params-unmasked-mask", h + fwd + " params=" + fwdParams + "\n" +
                                        fwd.substr(0, 8) + "_add" +
                                        fwd.substr(8) +
                                        " mask=add params=" + fwdParams + "\n");
  {
    Manifest withParams;
    report("valid-params",
           parseManifest(h + fwd + " params=" + fwdParams + "\n" +
                             fwd.substr(0, 8) + "_add" + fwd.substr(8) +
                             " mask=add params=q:memref4,k:memref4,v:memref4,"
                             "o:memref4,lse:memref3,mask:memref4,"
                             "scale_log2:f32,window:i64\n",
                         "m.manifest", withParams));
  }
  // The tma key (forward: q, k and v once each; decode_partial: k and v):
  // a box and swizzle per tensor map; with it the ABI ends with the maps.
  const std::string tmaParams = fwdParams + ",q_tmap:tmap4,k_tmap:tmap4,"
                                            "v_tmap:tmap4";
  const std::string tma = " tma=q:128x64:128,k:64x64:128,v:64x32:64";
  {
    Manifest m;
    report("tma-valid",
           parseManifest(h + fwd + tma + " params=" + tmaParams + "\n" +
                             fwd.substr(0, 8) + "_add" + fwd.substr(8) +
                             " mask=add params=q:memref4,k:memref4,"
                             "v:memref4,o:memref4,lse:memref3,mask:memref4,"
                             "scale_log2:f32,window:i64,"
                             "q_tmap:tmap4,k_tmap:tmap4,v_tmap:tmap4 "
                             "tma=v:128x64:128,q:128x64:128,k:128x64:128\n" +
                             "kernel k_tl kind=forward dtype=bf16 "
                             "head_dim=128 value_dim=128 causal=top_left "
                             "block_q=128 block_kv=64 threads=256 smem=0\n",
                         "m.manifest", m));
    printTmaKernels(m);
  }
  parseCase("tma-f32",
            h + "kernel k kind=forward dtype=f32 head_dim=32 value_dim=32 "
                "causal=none block_q=64 block_kv=64 threads=128 smem=0 "
                "tma=q:64x32:128,k:64x32:128,v:64x32:128\n");
  parseCase("tma-f32-wide",
            h + "kernel k kind=forward dtype=f32 head_dim=64 value_dim=64 "
                "causal=none block_q=64 block_kv=64 threads=128 smem=0 "
                "tma=q:64x64:128,k:64x32:128,v:64x32:128\n");
  // Decode partial kernels take maps of k and v (their Q rows span heads).
  parseCase("tma-decode",
            h + "kernel d kind=decode_partial dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none rows=16 block_kv=64 threads=128 "
                "smem=0 tma=k:64x64:128,v:64x64:128\n");
  parseCase("tma-decode-q",
            h +
                "kernel d kind=decode_partial dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none rows=16 block_kv=64 threads=128 "
                "smem=0" +
                tma + "\n");
  parseCase("tma-combine",
            h +
                "kernel c kind=decode_combine dtype=bf16 value_dim=128 "
                "rows=4 threads=128 smem=0" +
                tma + "\n");
  parseCase("tma-twice", h + fwd + tma + tma + "\n");
  parseCase("tma-empty", h + fwd + " tma=\n");
  parseCase("tma-no-swizzle", h + fwd + " tma=q:128x64,k:64x64:128\n");
  parseCase("tma-no-x", h + fwd + " tma=q:128*64:128\n");
  parseCase("tma-not-int", h + fwd + " tma=q:128x64:wide\n");
  parseCase("tma-trailing-comma", h + fwd + tma + ",\n");
  parseCase("tma-unknown", h + fwd + " tma=q:128x64:128,o:64x64:128\n");
  parseCase("tma-duplicate",
            h + fwd + " tma=q:128x64:128,k:64x64:128,q:64x64:128\n");
  parseCase("tma-missing", h + fwd + " tma=q:128x64:128,v:64x64:128\n");
  parseCase("tma-rows-zero", h + fwd + " tma=q:0x64:128\n");
  parseCase("tma-rows-257", h + fwd + " tma=q:257x64:128\n");
  parseCase("tma-cols-512", h + fwd + " tma=q:128x512:128\n");
  parseCase("tma-swizzle-16", h + fwd + " tma=q:128x8:16\n");
  // Swizzle 0: no swizzle, so no bound on a box row but whole 16-byte
  // units.
  parseCase("tma-swizzle-none",
            h + fwd + " tma=q:128x128:0,k:64x64:0,v:64x32:0\n");
  parseCase("tma-swizzle-none-row-not-16", h + fwd + " tma=q:128x4:0\n");
  parseCase("tma-wider-than-swizzle", h + fwd + " tma=q:128x64:64\n");
  parseCase("tma-row-not-16", h + fwd + " tma=q:128x4:32\n");
  parseCase("tma-params-without-maps",
            h + fwd + tma + " params=" + fwdParams + "\n");
  parseCase("params-maps-without-tma", h + fwd + " params=" + tmaParams + "\n");
  parseCase("duplicate-config-tma", h + fwd + "\n" + fwd.substr(0, 8) + "2" +
                                        fwd.substr(8) + tma + "\n");
  // The backward kinds: the forward's keys, a mask, no tensor maps and no
  // persistent grid; their parameters are the backward's.
  const std::string bwdParams =
      "q:memref4,k:memref4,v:memref4,o:memref4,dout:memref4,lse:memref3,"
      "dq:memref4,dk:memref4,dv:memref4,row_stats:memref4";
  const std::string bwd = "kernel b kind=backward_kv dtype=bf16 head_dim=64 "
                          "value_dim=64 causal=none block_q=64 block_kv=64 "
                          "threads=128 smem=36864";
  {
    Manifest m;
    report(
        "backward-valid",
        parseManifest(h +
                          "kernel d kind=backward_dot dtype=bf16 head_dim=64 "
                          "value_dim=64 causal=none block_q=64 block_kv=64 "
                          "threads=128 smem=0 params=" +
                          bwdParams + ",scale_log2:f32,window:i64\n" + bwd +
                          " params=" + bwdParams +
                          ",scale_log2:f32,window:i64\n"
                          "kernel q kind=backward_q dtype=bf16 head_dim=64 "
                          "value_dim=64 causal=none block_q=128 block_kv=32 "
                          "threads=256 smem=36864\n" +
                          bwd.substr(0, 8) + "_add" + bwd.substr(8) +
                          " mask=add params=" + bwdParams +
                          ",mask:memref4,scale_log2:f32,window:i64\n"
                          "kernel q_bool mask=bool kind=backward_q dtype=f16 "
                          "head_dim=128 value_dim=128 causal=bottom_right "
                          "block_q=128 block_kv=32 threads=256 smem=36864\n",
                      "m.manifest", m));
    for (const KernelSpec &k : m.sections.front().kernels)
      std::printf("  line %d: %s (%s) params=%zu block_q=%lld block_kv=%lld\n",
                  k.line, k.name.c_str(), abiName(k).c_str(),
                  abiParamSizes(k).size(), static_cast<long long>(k.blockQ),
                  static_cast<long long>(k.blockKv));
    std::printf("backward-valid: backward_q: %s\n",
                m.sections.front().describe(KernelKind::BackwardQuery).c_str());
  }
  parseCase("backward-missing-block-q",
            h + "kernel b kind=backward_q dtype=bf16 head_dim=64 "
                "value_dim=64 causal=none block_kv=64 threads=128 smem=0\n");
  parseCase("backward-missing-causal",
            h + "kernel b kind=backward_dot dtype=bf16 head_dim=64 "
                "value_dim=64 block_q=64 block_kv=64 threads=128 smem=0\n");
  parseCase("backward-params-forward", h + bwd + " params=" + fwdParams + "\n");
  parseCase("backward-params-no-row-stats",
            h + bwd +
                " params=q:memref4,k:memref4,v:memref4,o:memref4,"
                "dout:memref4,lse:memref3,dq:memref4,dk:memref4,dv:memref4,"
                "scale_log2:f32,window:i64\n");
  // The ABI before row_stats: D alone, f32 [B, Hq, Sq].
  parseCase("backward-params-row-dot",
            h + bwd +
                " params=q:memref4,k:memref4,v:memref4,o:memref4,"
                "dout:memref4,lse:memref3,dq:memref4,dk:memref4,dv:memref4,"
                "row_dot:memref3,scale_log2:f32,window:i64\n");
  parseCase("backward-params-unmasked-mask",
            h + bwd + " mask=bool params=" + bwdParams +
                ",scale_log2:f32,window:i64\n");
  parseCase("backward-params-mask-last",
            h + bwd + " mask=add params=" + bwdParams +
                ",scale_log2:f32,window:i64,mask:memref4\n");
  // tma on backward_kv (maps of q, k, v, dout and row_stats, whose box is
  // of f32 records whatever the kernel's dtype) and backward_q (q, k, v,
  // dout), never backward_dot; the maps follow the mask's descriptor, the
  // mod operands them.
  const std::string kvTma = " tma=q:64x64:128,k:64x64:128,v:64x64:128,"
                            "dout:64x64:128,row_stats:64x4:0";
  const std::string kvMaps = ",q_tmap:tmap4,k_tmap:tmap4,v_tmap:tmap4,"
                             "dout_tmap:tmap4,row_stats_tmap:tmap4";
  {
    Manifest m;
    report("backward-tma-valid",
           parseManifest(
               h + bwd + kvTma + " params=" + bwdParams +
                   ",scale_log2:f32,window:i64" + kvMaps + "\n" +
                   "kernel q kind=backward_q dtype=bf16 head_dim=64 "
                   "value_dim=64 causal=none block_q=128 block_kv=32 "
                   "threads=256 smem=36864 tma=dout:128x64:128,"
                   "q:128x64:128,k:32x64:128,v:32x64:128 params=" +
                   bwdParams +
                   ",scale_log2:f32,window:i64,q_tmap:tmap4,k_tmap:tmap4,"
                   "v_tmap:tmap4,dout_tmap:tmap4\n" +
                   bwd.substr(0, 8) + "_add" + bwd.substr(8) +
                   " mask=add mod=bias mod_hash=0123456789abcdef "
                   "mod_operands=f32:1" +
                   kvTma + " params=" + bwdParams +
                   ",mask:memref4,scale_log2:f32,window:i64" + kvMaps +
                   ",mod0:memref1\n"
                   "kernel b_f16 kind=backward_kv dtype=f16 head_dim=64 "
                   "value_dim=64 causal=none block_q=64 block_kv=64 "
                   "threads=128 smem=36864 tma=q:64x64:128,k:64x64:128,"
                   "v:64x64:128,dout:64x64:128,row_stats:64x8:0\n",
               "m.manifest", m));
    printTmaKernels(m);
  }
  // The backward's column blocks load whole tiles by their tensor maps.
  parseCase("backward-value-blocks-tma",
            h + bwd + " value_blocks=2" + kvTma + " params=" + bwdParams +
                ",scale_log2:f32,window:i64" + kvMaps + "\n");
  parseCase("backward-tma-dot",
            h +
                "kernel d kind=backward_dot dtype=bf16 head_dim=64 "
                "value_dim=64 causal=none block_q=64 block_kv=64 "
                "threads=128 smem=0" +
                kvTma + "\n");
  parseCase("backward-tma-q-row-stats",
            h + "kernel q kind=backward_q dtype=bf16 head_dim=64 "
                "value_dim=64 causal=none block_q=128 block_kv=32 "
                "threads=256 smem=0 tma=q:128x64:128,k:32x64:128,"
                "v:32x64:128,dout:128x64:128,row_stats:128x4:0\n");
  parseCase("backward-tma-missing-row-stats",
            h + bwd +
                " tma=q:64x64:128,k:64x64:128,v:64x64:128,"
                "dout:64x64:128\n");
  parseCase("backward-tma-swizzle",
            h + bwd +
                " tma=q:64x64:128,k:64x64:128,v:64x64:128,"
                "dout:64x64:96,row_stats:64x4:0\n");
  // 2 f32 are 8 bytes (2 bf16 would be 4).
  parseCase("backward-tma-row-stats-8-bytes",
            h + bwd +
                " tma=q:64x64:128,k:64x64:128,v:64x64:128,"
                "dout:64x64:128,row_stats:64x2:0\n");
  parseCase("backward-tma-params-without-maps",
            h + bwd + kvTma + " params=" + bwdParams +
                ",scale_log2:f32,window:i64\n");
  parseCase("backward-tma-params-maps-after-mod",
            h + bwd + " mod=bias mod_hash=0123456789abcdef mod_operands=f32:1" +
                kvTma + " params=" + bwdParams +
                ",scale_log2:f32,window:i64,mod0:memref1" + kvMaps + "\n");
  // dq_accum's map belongs to the atomic dQ mode's backward_kv only, and
  // that kernel needs it (f32: 32 columns are one 128-byte swizzle row).
  parseCase("backward-tma-dq-accum-deterministic",
            h + bwd + kvTma + ",dq_accum:64x32:128\n");
  parseCase("backward-tma-atomic-missing-dq-accum",
            h + bwd + " dq=atomic" + kvTma + "\n");
  parseCase("backward-tma-atomic-dq-accum-wide",
            h + bwd + " dq=atomic" + kvTma + ",dq_accum:64x64:128\n");
  // The ordered dQ mode's backward_kv takes the same dq_accum map, and
  // dq_turns among its memrefs, after dq_accum.
  parseCase("backward-tma-ordered-missing-dq-accum",
            h + bwd + " dq=ordered" + kvTma + "\n");
  {
    Manifest m;
    const std::string maps = kvMaps + ",dq_accum_tmap:tmap4";
    report("backward-tma-ordered",
           parseManifest(h + bwd + " dq=ordered" + kvTma +
                             ",dq_accum:64x32:128 params=" + bwdParams +
                             ",dq_accum:memref4,dq_turns:memref3,"
                             "scale_log2:f32,window:i64" +
                             maps + "\n",
                         "m.manifest", m));
    for (const KernelSpec &k : m.sections.front().kernels)
      std::printf("backward-tma-ordered: %s params=%zu: %s\n",
                  abiName(k).c_str(), abiParamSizes(k).size(),
                  abiParamList(k).c_str());
  }
  parseCase("backward-grid", h + bwd + " grid=persistent\n");
  parseCase("backward-block-q-limit",
            h + "kernel b kind=backward_dot dtype=bf16 head_dim=64 "
                "value_dim=64 causal=none block_q=2048 block_kv=64 "
                "threads=128 smem=0\n");
  parseCase("backward-duplicate-config",
            h + bwd + "\n" + bwd.substr(0, 8) + "2" + bwd.substr(8) + "\n");
  // The dq key (the backward kinds only): dq=atomic, the atomic dQ mode,
  // whose ABI has dq_accum after row_stats (before the mask), dq=ordered,
  // the ordered one, whose ABI has dq_turns after dq_accum; absent means
  // dQ recomputed. The lookup tells the three apart, so all may have the
  // same specialisation.
  const std::string scalars = ",scale_log2:f32,window:i64";
  const std::string accum = ",dq_accum:memref4";
  const std::string turns = ",dq_turns:memref3";
  {
    Manifest m;
    report("atomic-valid",
           parseManifest(
               h + bwd + " params=" + bwdParams + scalars + "\n" +
                   bwd.substr(0, 8) + "_atomicdq" + bwd.substr(8) +
                   " dq=atomic params=" + bwdParams + accum + scalars + "\n" +
                   bwd.substr(0, 8) + "_boolmask_atomicdq" + bwd.substr(8) +
                   " mask=bool dq=atomic params=" + bwdParams + accum +
                   ",mask:memref4" + scalars + "\n" +
                   "kernel d kind=backward_dot dtype=bf16 head_dim=64 "
                   "value_dim=64 causal=none block_q=64 block_kv=64 "
                   "threads=128 smem=0 dq=atomic\n" +
                   bwd.substr(0, 8) + "_ordereddq" + bwd.substr(8) +
                   " dq=ordered params=" + bwdParams + accum + turns + scalars +
                   "\n" + bwd.substr(0, 8) + "_boolmask_ordereddq" +
                   bwd.substr(8) + " mask=bool dq=ordered params=" + bwdParams +
                   accum + turns + ",mask:memref4" + scalars + "\n",
               "m.manifest", m));
    const ManifestSection &section = m.sections.front();
    for (const KernelSpec &k : section.kernels)
      std::printf("  line %d: %s (%s) params=%zu\n", k.line, k.name.c_str(),
                  abiName(k).c_str(), abiParamSizes(k).size());
    std::printf("atomic-valid: backward_kv: %s\n",
                section.describe(KernelKind::BackwardKeyValue).c_str());
    for (DqMode dq : {DqMode::Recompute, DqMode::Atomic, DqMode::Ordered}) {
      const KernelSpec *k = section.find(
          KernelKind::BackwardKeyValue, ATTN_BF16, 64, 64, ATTN_CAUSAL_NONE,
          MaskKind::None, false, false, false, dq);
      std::printf("atomic-valid: find dq=%s: %s\n", dqModeName(dq),
                  k ? k->name.c_str() : "none");
    }
  }
  parseCase("atomic-bad-value", h + bwd + " dq=nondeterministic\n");
  parseCase("atomic-forward", h + fwd + " dq=atomic\n");
  parseCase("atomic-combine",
            h + "kernel c kind=decode_combine dtype=bf16 value_dim=128 "
                "rows=16 threads=32 smem=0 dq=atomic\n");
  parseCase("params-accum-without-atomic",
            h + bwd + " params=" + bwdParams + accum + scalars + "\n");
  parseCase("params-atomic-without-accum",
            h + bwd + " dq=atomic params=" + bwdParams + scalars + "\n");
  parseCase("params-atomic-accum-after-mask",
            h + bwd + " mask=add dq=atomic params=" + bwdParams +
                ",mask:memref4" + accum + scalars + "\n");
  parseCase("atomic-duplicate-config", h + bwd + " dq=atomic\n" +
                                           bwd.substr(0, 8) + "2" +
                                           bwd.substr(8) + " dq=atomic\n");
  parseCase("ordered-forward", h + fwd + " dq=ordered\n");
  parseCase("params-ordered-without-turns",
            h + bwd + " dq=ordered params=" + bwdParams + accum + scalars +
                "\n");
  parseCase("params-atomic-with-turns", h + bwd +
                                            " dq=atomic params=" + bwdParams +
                                            accum + turns + scalars + "\n");
  parseCase("params-ordered-turns-before-accum",
            h + bwd + " dq=ordered params=" + bwdParams + turns + accum +
                scalars + "\n");
  parseCase("ordered-duplicate-config", h + bwd + " dq=ordered\n" +
                                            bwd.substr(0, 8) + "2" +
                                            bwd.substr(8) + " dq=ordered\n");
  // The kv key (decode_partial only): kv=paged, whose ABI has kv_lens and
  // block_table after v; absent means each sequence's own K/V. The lookup
  // tells the two apart, so both may have the same dtype, dims and causal.
  const std::string dec = "kernel d kind=decode_partial dtype=bf16 "
                          "head_dim=128 value_dim=128 causal=none rows=16 "
                          "block_kv=64 threads=128 smem=0";
  const std::string decParams = "q:memref4,k:memref4,v:memref4,"
                                "partial_o:memref5,partial_lse:memref4,"
                                "scale_log2:f32,window:i64";
  const std::string pagedParams =
      "q:memref4,k:memref4,v:memref4,kv_lens:memref1,block_table:memref2,"
      "partial_o:memref5,partial_lse:memref4,scale_log2:f32,window:i64";
  {
    Manifest m;
    report("paged-valid",
           parseManifest(h + dec + " params=" + decParams + "\n" +
                             dec.substr(0, 8) + "_paged" + dec.substr(8) +
                             " kv=paged params=" + pagedParams + "\n" +
                             "kernel d_paged_br kv=paged "
                             "kind=decode_partial dtype=bf16 head_dim=128 "
                             "value_dim=128 causal=bottom_right rows=16 "
                             "block_kv=64 threads=128 smem=0\n",
                         "m.manifest", m));
    const ManifestSection &section = m.sections.front();
    for (const KernelSpec &k : section.kernels)
      std::printf("  line %d: %s (%s) params=%zu\n", k.line, k.name.c_str(),
                  abiName(k).c_str(), abiParamSizes(k).size());
    std::printf("paged-valid: decode_partial: %s\n",
                section.describe(KernelKind::DecodePartial).c_str());
    for (bool paged : {false, true}) {
      const KernelSpec *k =
          section.find(KernelKind::DecodePartial, ATTN_BF16, 128, 128,
                       ATTN_CAUSAL_NONE, MaskKind::None, paged);
      std::printf("paged-valid: find paged=%d: %s\n", paged,
                  k ? k->name.c_str() : "none");
    }
  }
  parseCase("paged-bad-value", h + dec + " kv=contiguous\n");
  parseCase("paged-twice", h + dec + " kv=paged kv=paged\n");
  parseCase("paged-forward", h + fwd + " kv=paged\n");
  parseCase("paged-combine",
            h + "kernel c kind=decode_combine dtype=bf16 value_dim=128 "
                "rows=4 threads=128 smem=0 kv=paged\n");
  parseCase("paged-backward", h + bwd + " kv=paged\n");
  parseCase("paged-tma", h + dec + " kv=paged tma=k:64x64:128,v:64x64:128\n");
  parseCase("paged-params-unpaged",
            h + dec + " kv=paged params=" + decParams + "\n");
  parseCase("unpaged-params-paged", h + dec + " params=" + pagedParams + "\n");
  parseCase("paged-duplicate-config", h + dec + " kv=paged\n" +
                                          dec.substr(0, 8) + "2" +
                                          dec.substr(8) + " kv=paged\n");
  // The q key (forward only): q=packed, a packed batch whose ABI adds
  // query_offsets after v, then key_offsets (kv=packed) or kv_lens and
  // block_table (kv=paged); one of the two is required, and neither goes
  // with a mask, a persistent grid or tma. The lookup tells a packed, a
  // paged and a plain kernel of the same dtype, dims and causal apart.
  const std::string packedParams =
      "q:memref4,k:memref4,v:memref4,query_offsets:memref1,"
      "key_offsets:memref1,o:memref4,lse:memref3,scale_log2:f32,window:i64";
  const std::string packedPagedParams =
      "q:memref4,k:memref4,v:memref4,query_offsets:memref1,kv_lens:memref1,"
      "block_table:memref2,o:memref4,lse:memref3,scale_log2:f32,window:i64";
  {
    Manifest m;
    report("varlen-valid",
           parseManifest(
               h + fwd + " params=" + fwdParams + "\n" + fwd.substr(0, 8) +
                   "_varlen" + fwd.substr(8) +
                   " q=packed kv=packed params=" + packedParams + "\n" +
                   fwd.substr(0, 8) + "_chunked" + fwd.substr(8) +
                   " kv=paged q=packed params=" + packedPagedParams + "\n" +
                   // attn-compile's line for examples/gpu/varlen.mlir.
                   "kernel attn_fwd_bf16_d64_dv64_none_varlen_packed "
                   "kind=forward dtype=bf16 head_dim=64 value_dim=64 "
                   "causal=none q=packed kv=packed block_q=128 block_kv=64 "
                   "threads=128 smem=73728 params=" +
                   packedParams + "\n",
               "m.manifest", m));
    const ManifestSection &section = m.sections.front();
    for (const KernelSpec &k : section.kernels)
      std::printf("  line %d: %s (%s) params=%zu\n", k.line, k.name.c_str(),
                  abiName(k).c_str(), abiParamSizes(k).size());
    std::printf("varlen-valid: forward: %s\n",
                section.describe(KernelKind::Forward).c_str());
    const struct {
      bool paged, packedQueries, packedKeys;
    } lookups[] = {{false, false, false},
                   {false, true, true},
                   {true, true, false},
                   {false, true, false},
                   {true, false, false}};
    for (const auto &l : lookups) {
      const KernelSpec *k = section.find(
          KernelKind::Forward, ATTN_BF16, 128, 128, ATTN_CAUSAL_NONE,
          MaskKind::None, l.paged, l.packedQueries, l.packedKeys);
      std::printf("varlen-valid: find paged=%d q=%d kv=%d: %s\n", l.paged,
                  l.packedQueries, l.packedKeys, k ? k->name.c_str() : "none");
    }
  }
  parseCase("varlen-bad-value", h + fwd + " q=ragged kv=packed\n");
  parseCase("varlen-twice", h + fwd + " q=packed q=packed kv=packed\n");
  parseCase("varlen-decode", h + dec + " q=packed kv=paged\n");
  parseCase("varlen-backward", h + bwd + " q=packed kv=packed\n");
  parseCase("varlen-no-kv", h + fwd + " q=packed\n");
  parseCase("varlen-kv-without-q", h + fwd + " kv=packed\n");
  parseCase("varlen-kv-decode", h + dec + " kv=packed\n");
  parseCase("varlen-mask", h + fwd + " q=packed kv=packed mask=add\n");
  parseCase("varlen-mask-none", h + fwd + " q=packed kv=paged mask=none\n");
  parseCase("varlen-persistent",
            h + fwd + " q=packed kv=packed grid=persistent\n");
  parseCase("varlen-tma", h + fwd + " q=packed kv=packed" + tma + "\n");
  parseCase("varlen-paged-tma", h + fwd + " q=packed kv=paged" + tma + "\n");
  parseCase("varlen-params-plain",
            h + fwd + " q=packed kv=packed params=" + fwdParams + "\n");
  parseCase("varlen-params-paged",
            h + fwd + " q=packed kv=packed params=" + packedPagedParams + "\n");
  parseCase("plain-params-varlen", h + fwd + " params=" + packedParams + "\n");
  parseCase("varlen-duplicate-config",
            h + fwd + " q=packed kv=packed\n" + fwd.substr(0, 8) + "2" +
                fwd.substr(8) + " kv=packed q=packed\n");
  parseCase("duplicate-config-mask",
            h + fwd + " mask=add\n" +
                "kernel k2 kind=forward dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none block_q=64 block_kv=32 "
                "threads=128 smem=0 mask=add\n");
  parseCase("duplicate-config-mask-none",
            h + fwd + "\n" +
                "kernel k2 kind=forward dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none block_q=64 block_kv=32 "
                "threads=128 smem=0 mask=none\n");
  {
    Manifest masks;
    report("valid-masks",
           parseManifest(h + fwd + "\n" + fwd.substr(0, 8) + "_add" +
                             fwd.substr(8) + " mask=add\n" + fwd.substr(0, 8) +
                             "_bool" + fwd.substr(8) + " mask=bool\n" +
                             "kernel k_none mask=none kind=forward "
                             "dtype=bf16 head_dim=128 value_dim=128 "
                             "causal=top_left block_q=128 block_kv=64 "
                             "threads=256 smem=0\n"
                             "kernel c mask=none kind=decode_combine "
                             "dtype=bf16 value_dim=128 rows=4 threads=128 "
                             "smem=0\n",
                         "m.manifest", masks));
    for (const KernelSpec &k : masks.sections.front().kernels)
      std::printf("  line %d: %s %s causal=%s mask=%s\n", k.line,
                  k.name.c_str(), kernelKindName(k.kind), causalName(k.causal),
                  maskKindName(k.mask));
    std::printf("valid-masks: forward: %s\n",
                masks.sections.front().describe(KernelKind::Forward).c_str());
  }

  // Comments, CRLF line ends, blank lines, tabs, extra known keys.
  Manifest m;
  std::string crlf;
  for (char c : std::string(kModule)) {
    if (c == '\n')
      crlf += "\r\n\t \r\n";
    else
      crlf += c;
  }
  crlf += "kernel comb_f16_64 kind=decode_combine dtype=f16 value_dim=64 "
          "head_dim=64 rows=4 threads=128 smem=0 # a comment\n";
  report("valid", parseManifest(crlf, "m.manifest", m));
  const ManifestSection &only = m.sections.front();
  std::printf("valid: version=%d target=%s ptx=%s kernels=%zu sections=%zu\n",
              m.version, only.target.c_str(), only.ptxFile.c_str(),
              only.kernels.size(), m.sections.size());
  for (const KernelSpec &k : only.kernels)
    std::printf(
        "  line %d: %s %s %s d%lld/%lld causal=%s block_q=%lld "
        "rows=%lld block_kv=%lld threads=%lld smem=%lld\n",
        k.line, k.name.c_str(), kernelKindName(k.kind), dtypeName(k.dtype),
        static_cast<long long>(k.headDim), static_cast<long long>(k.valueDim),
        causalName(k.causal), static_cast<long long>(k.blockQ),
        static_cast<long long>(k.rows), static_cast<long long>(k.blockKv),
        static_cast<long long>(k.threads), static_cast<long long>(k.smem));
  return runSections();
}

//===----------------------------------------------------------------------===//
// PTX checks
//===----------------------------------------------------------------------===//

int runPtx() {
  Manifest parsed;
  if (!setUp(std::string(kHeader) + kFwd + "\n", parsed))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  const char *valid = "//\n.version 8.4\n.target sm_90a\n.address_size 64\n"
                      "\n.visible .entry k(\n\t.param .u64 p0\n)\n{\n}\n";
  report("ptx-valid", checkPtx(m, valid, "k.ptx"));
  report("ptx-not-ptx", checkPtx(m, "hello\n", "k.ptx"));
  report("ptx-target",
         checkPtx(m, ".version 8.4\n.target sm_80\n.entry k(\n", "k.ptx"));
  report("ptx-no-entry",
         checkPtx(m, ".version 8.4\n.target sm_90a\n.entry k_v2(\n", "k.ptx"));
  report("ptx-target-suffix",
         checkPtx(m, ".target sm_90a, debug\n.entry k (\n", "k.ptx"));
  return 0;
}

//===----------------------------------------------------------------------===//
// Forward and decode plans
//===----------------------------------------------------------------------===//

constexpr uint64_t kQ = 0x100000, kK = 0x200000, kV = 0x300000, kO = 0x400000,
                   kLse = 0x500000, kWorkspace = 0x600000;

/// A BHSD (contiguous) tensor of logical shape [b, h, s, d].
attn_tensor bhsd(attn_dtype dtype, int64_t b, int64_t h, int64_t s, int64_t d,
                 uint64_t data) {
  attn_tensor t = {reinterpret_cast<void *>(data),
                   dtype,
                   4,
                   {b, h, s, d},
                   {h * s * d, s * d, d, 1}};
  return t;
}

/// A BSHD tensor (memory [b, s, h, d]) in logical order [b, h, s, d].
attn_tensor bshd(attn_dtype dtype, int64_t b, int64_t h, int64_t s, int64_t d,
                 uint64_t data) {
  attn_tensor t = {reinterpret_cast<void *>(data),
                   dtype,
                   4,
                   {b, h, s, d},
                   {s * h * d, d, h * d, 1}};
  return t;
}

attn_tensor lseOf(int64_t b, int64_t h, int64_t s, uint64_t data) {
  attn_tensor t = {reinterpret_cast<void *>(data),
                   ATTN_F32,
                   3,
                   {b, h, s, 0},
                   {h * s, s, 1, 0}};
  return t;
}

/// Prints the memref descriptor that starts at args[at]; returns its end.
size_t printMemref(const char *name, const std::vector<uint64_t> &args,
                   size_t at, int rank) {
  std::printf("  %s: ptr=0x%llx aligned=0x%llx offset=%lld sizes=[", name,
              static_cast<unsigned long long>(args[at]),
              static_cast<unsigned long long>(args[at + 1]),
              static_cast<long long>(args[at + 2]));
  for (int i = 0; i < rank; ++i)
    std::printf("%s%lld", i ? ", " : "",
                static_cast<long long>(args[at + 3 + i]));
  std::printf("] strides=[");
  for (int i = 0; i < rank; ++i)
    std::printf("%s%lld", i ? ", " : "",
                static_cast<long long>(args[at + 3 + rank + i]));
  std::printf("]\n");
  return at + 3 + 2 * rank;
}

float f32Word(uint64_t word) {
  uint32_t bits = static_cast<uint32_t>(word);
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

void printLaunchHeader(const char *name, const Launch &l) {
  std::printf("%s: kernel=%s grid=(%u, %u, %u) block=%u smem=%u params=%zu "
              "abi=%zu\n",
              name, l.kernel->name.c_str(), l.grid[0], l.grid[1], l.grid[2],
              l.block, l.smem, l.args.size(), abiParamSizes(*l.kernel).size());
}

/// Prints the descriptors of a block mask's lists that start at args[at],
/// in the ABI's order: the forward's four, with `backward` all eight;
/// returns their end.
size_t printBlockMask(const std::vector<uint64_t> &args, size_t at,
                      bool backward) {
  const struct {
    const char *name;
    int rank;
  } lists[] = {{"kv_block_counts", 3},      {"kv_block_indices", 4},
               {"full_kv_block_counts", 3}, {"full_kv_block_indices", 4},
               {"q_block_counts", 3},       {"q_block_indices", 4},
               {"full_q_block_counts", 3},  {"full_q_block_indices", 4}};
  for (int i = 0; i < (backward ? 8 : 4); ++i)
    at = printMemref(lists[i].name, args, at, lists[i].rank);
  return at;
}

void printForward(const char *name, const Launch &l) {
  printLaunchHeader(name, l);
  size_t at = 0;
  at = printMemref("q", l.args, at, 4);
  at = printMemref("k", l.args, at, 4);
  at = printMemref("v", l.args, at, 4);
  at = printMemref("o", l.args, at, 4);
  at = printMemref("lse", l.args, at, 3);
  if (l.kernel->mask != MaskKind::None)
    at = printMemref("mask", l.args, at, 4);
  if (l.kernel->hasBlockMask())
    at = printBlockMask(l.args, at, /*backward=*/false);
  std::printf("  scale_log2=%.6f window=%lld\n", f32Word(l.args[at]),
              static_cast<long long>(l.args[at + 1]));
}

struct ForwardArgs {
  using Plan = Launch;
  attn_tensor q, k, v, o, lse;
  attn_options options = {0.0f, ATTN_CAUSAL_NONE, -1, nullptr};
  bool withLse = true;

  /// B=2, Hq=8, Hkv=2, Sq=77, Sk=1000, D=Dv=128, bf16, BHSD.
  ForwardArgs() {
    q = bhsd(ATTN_BF16, 2, 8, 77, 128, kQ);
    k = bhsd(ATTN_BF16, 2, 2, 1000, 128, kK);
    v = bhsd(ATTN_BF16, 2, 2, 1000, 128, kV);
    o = bhsd(ATTN_BF16, 2, 8, 77, 128, kO);
    lse = lseOf(2, 8, 77, kLse);
  }
  attn_status plan(const ManifestSection &m, Launch &l) const {
    return planForward(m, 132, &q, &k, &v, &o, withLse ? &lse : nullptr,
                       &options, l);
  }
  attn_status call(attn_module *module, void *stream) const {
    return attn_forward(module, &q, &k, &v, &o, withLse ? &lse : nullptr,
                        &options, stream);
  }
};

/// Mutations every forward kernel refuses, with or without tensor maps:
/// the data pointer `bytes` past its 16-byte aligned base, and rows of 132
/// elements (264 bytes for 16-bit types, not a multiple of 16) with
/// `rows` rows per head and `heads` heads.
void misalignPointer(attn_tensor &t, uint64_t base, uint64_t bytes) {
  t.data = reinterpret_cast<void *>(base + bytes);
}
void misalignRowStride(attn_tensor &t, int64_t rows, int64_t heads) {
  t.strides[2] = 132;
  t.strides[1] = 132 * rows;
  t.strides[0] = 132 * rows * heads;
}

int runForward() {
  Manifest parsed;
  if (!setUp(kModule, parsed))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  {
    ForwardArgs a;
    Launch l;
    report("bhsd", a.plan(m, l));
    printForward("bhsd", l);
  }
  {
    ForwardArgs a;
    a.q = bshd(ATTN_BF16, 2, 8, 77, 128, kQ);
    a.k = bshd(ATTN_BF16, 2, 2, 1000, 128, kK);
    a.v = bshd(ATTN_BF16, 2, 2, 1000, 128, kV);
    a.o = bshd(ATTN_BF16, 2, 8, 77, 128, kO);
    a.withLse = false;
    a.options = {0.5f, ATTN_CAUSAL_BOTTOM_RIGHT, 256, nullptr};
    Launch l;
    report("bshd", a.plan(m, l));
    printForward("bshd", l);
  }
  {
    ForwardArgs a;
    a.options.causal = ATTN_CAUSAL_TOP_LEFT;
    Launch l;
    planForward(m, 132, &a.q, &a.k, &a.v, &a.o, nullptr, nullptr, l);
    std::printf("null-options: kernel=%s\n", l.kernel->name.c_str());
    a.options = {-1.0f, ATTN_CAUSAL_TOP_LEFT, 0, nullptr};
    report("top-left-window-0", a.plan(m, l));
    std::printf("top-left-window-0: kernel=%s window=%lld\n",
                l.kernel->name.c_str(), static_cast<long long>(l.args.back()));
  }
  {
    ForwardArgs a;
    a.q = bhsd(ATTN_F16, 1, 4, 1, 64, kQ);
    a.k = bhsd(ATTN_F16, 1, 1, 4097, 64, kK);
    a.v = bhsd(ATTN_F16, 1, 1, 4097, 64, kV);
    a.o = bhsd(ATTN_F16, 1, 4, 1, 64, kO);
    a.lse = lseOf(1, 4, 1, kLse + 4);
    Launch l;
    report("f16-mqa", a.plan(m, l));
    printLaunchHeader("f16-mqa", l);
  }

  // Null pointers.
  {
    Launch l;
    ForwardArgs a;
    report("null-q",
           planForward(m, 132, nullptr, &a.k, &a.v, &a.o, nullptr, nullptr, l));
    report("null-o",
           planForward(m, 132, &a.q, &a.k, &a.v, nullptr, nullptr, nullptr, l));
  }
  ForwardArgs a;
  a.k.data = nullptr;
  planCase(m, "null-data", a);
  attn_status s =
      attn_forward(nullptr, &a.q, &a.k, &a.v, &a.o, nullptr, nullptr, nullptr);
  report("null-module", s);

  // Ranks, sizes, dtypes.
  planCases<ForwardArgs>(
      m,
      {
          {"rank-q", [&](ForwardArgs &a) { a.q.rank = 3; }},
          {"rank-lse", [&](ForwardArgs &a) { a.lse.rank = 4; }},
          {"empty-sk",
           [&](ForwardArgs &a) {
             a.k.shape[2] = 0;
             a.v.shape[2] = 0;
           }},
          {"dtype-enum",
           [&](ForwardArgs &a) { a.v.dtype = static_cast<attn_dtype>(7); }},
          {"dtype-mixed", [&](ForwardArgs &a) { a.k.dtype = ATTN_F16; }},
          {"dtype-o", [&](ForwardArgs &a) { a.o.dtype = ATTN_F32; }},
          {"dtype-lse", [&](ForwardArgs &a) { a.lse.dtype = ATTN_BF16; }},
          {"dtype-no-kernel",
           [&](ForwardArgs &a) {
             a.q = bhsd(ATTN_F32, 2, 8, 77, 128, kQ);
             a.k = bhsd(ATTN_F32, 2, 2, 1000, 128, kK);
             a.v = bhsd(ATTN_F32, 2, 2, 1000, 128, kV);
             a.o = bhsd(ATTN_F32, 2, 8, 77, 128, kO);
           }},
          // Shapes.
          {"shape-batch", [&](ForwardArgs &a) { a.k.shape[0] = 3; }},
          {"shape-gqa",
           [&](ForwardArgs &a) {
             a.q.shape[1] = 7;
             a.o.shape[1] = 7;
             a.lse.shape[1] = 7;
           }},
          {"shape-head-dim", [&](ForwardArgs &a) { a.k.shape[3] = 64; }},
          {"shape-sk", [&](ForwardArgs &a) { a.v.shape[2] = 999; }},
          {"shape-hkv", [&](ForwardArgs &a) { a.v.shape[1] = 4; }},
          {"shape-o", [&](ForwardArgs &a) { a.o.shape[2] = 78; }},
          {"shape-lse", [&](ForwardArgs &a) { a.lse.shape[2] = 1; }},
          {"no-kernel-d96",
           [&](ForwardArgs &a) {
             a.q = bhsd(ATTN_BF16, 2, 8, 77, 96, kQ);
             a.k = bhsd(ATTN_BF16, 2, 2, 1000, 96, kK);
             a.v = bhsd(ATTN_BF16, 2, 2, 1000, 96, kV);
             a.o = bhsd(ATTN_BF16, 2, 8, 77, 96, kO);
           }},
          {"no-kernel-causal",
           [&](ForwardArgs &a) {
             a.q = bhsd(ATTN_F16, 2, 8, 77, 64, kQ);
             a.k = bhsd(ATTN_F16, 2, 2, 1000, 64, kK);
             a.v = bhsd(ATTN_F16, 2, 2, 1000, 64, kV);
             a.o = bhsd(ATTN_F16, 2, 8, 77, 64, kO);
             a.options.causal = ATTN_CAUSAL_TOP_LEFT;
           }},
          {"grid-limit",
           [&](ForwardArgs &a) {
             a.q.shape[0] = a.k.shape[0] = a.v.shape[0] = a.o.shape[0] =
                 a.lse.shape[0] = 70000;
           }},
          // Sizes whose byte extent leaves int64: refused before any product of
          // them can wrap around (the kernels address with 64-bit offsets).
          {"extent-q",
           [&](ForwardArgs &a) {
             a.q.shape[2] = int64_t(1) << 40;
             a.q.strides[2] = int64_t(1) << 30;
           }},
          {"extent-o", [&](ForwardArgs &a) { a.o.strides[0] = INT64_MAX; }},
          // Strides and alignment.
          {"stride-last", [&](ForwardArgs &a) { a.q.strides[3] = 2; }},
          {"stride-negative", [&](ForwardArgs &a) { a.k.strides[2] = -128; }},
          {"stride-o-zero", [&](ForwardArgs &a) { a.o.strides[1] = 0; }},
          {"stride-k-broadcast",
           [&](ForwardArgs &a) {
             a.k.strides[0] = 0; // K/V broadcast over the batch is a valid read
             a.v.strides[0] = 0;
           }},
          {"stride-lse", [&](ForwardArgs &a) { a.lse.strides[2] = 2; }},
          {"align-pointer",
           [&](ForwardArgs &a) { misalignPointer(a.v, kV, 2); }},
          {"align-row-stride",
           [&](ForwardArgs &a) { misalignRowStride(a.q, 77, 8); }},
          {"align-size-one-dim",
           [&](ForwardArgs &a) {
             a.q.shape[2] = 1;
             a.o.shape[2] = 1;
             a.lse.shape[2] = 1;
             a.q.strides[2] = 3; // never stepped over: size 1
           }},
          {"align-lse",
           [&](ForwardArgs &a) {
             a.lse.data = reinterpret_cast<void *>(kLse + 2);
           }},
      });
  optionCases<ForwardArgs>(m);
  planCases<ForwardArgs>(
      m, {
             {"scale-inf", [&](ForwardArgs &a) { a.options.scale = INFINITY; }},
             {"scale-tiny", [&](ForwardArgs &a) { a.options.scale = 1e-30f; }},
             {"scale-huge", [&](ForwardArgs &a) { a.options.scale = 1e30f; }},
         });
  return 0;
}

void printDecode(const char *name, const DecodePlan &p) {
  std::printf("%s: splits=%lld chunk=%lld workspace=%lld\n", name,
              static_cast<long long>(p.numSplits),
              static_cast<long long>(p.chunk),
              static_cast<long long>(p.workspaceBytes));
  printLaunchHeader(name, p.partial);
  size_t at = 0;
  at = printMemref("q", p.partial.args, at, 4);
  at = printMemref("k", p.partial.args, at, 4);
  at = printMemref("v", p.partial.args, at, 4);
  at = printMemref("partial_o", p.partial.args, at, 5);
  at = printMemref("partial_lse", p.partial.args, at, 4);
  std::printf("  scale_log2=%.6f window=%lld\n", f32Word(p.partial.args[at]),
              static_cast<long long>(p.partial.args[at + 1]));
  printLaunchHeader(name, p.combine);
  at = 0;
  at = printMemref("partial_o", p.combine.args, at, 5);
  at = printMemref("partial_lse", p.combine.args, at, 4);
  at = printMemref("o", p.combine.args, at, 4);
  printMemref("lse", p.combine.args, at, 3);
}

struct DecodeArgs {
  using Plan = DecodePlan;
  attn_tensor q, k, v, o, lse;
  attn_options options = {0.0f, ATTN_CAUSAL_NONE, -1, nullptr};
  int64_t splits = 0;
  uint64_t workspace = kWorkspace;
  int64_t workspaceBytes = int64_t(1) << 30;

  /// B, Hq=32, Hkv, Sq=1, Sk, D=Dv=128, bf16, BHSD.
  DecodeArgs(int64_t b = 1, int64_t hkv = 8, int64_t sk = 131072) {
    q = bhsd(ATTN_BF16, b, 32, 1, 128, kQ);
    k = bhsd(ATTN_BF16, b, hkv, sk, 128, kK);
    v = bhsd(ATTN_BF16, b, hkv, sk, 128, kV);
    o = bhsd(ATTN_BF16, b, 32, 1, 128, kO);
    lse = lseOf(b, 32, 1, kLse);
  }
  DecodeTensors tensors() const {
    DecodeTensors t;
    t.q = &q;
    t.k = &k;
    t.v = &v;
    t.o = &o;
    t.lse = &lse;
    return t;
  }
  attn_status plan(const ManifestSection &m, DecodePlan &p) const {
    return planDecode(m, 132, tensors(), &options, splits,
                      reinterpret_cast<void *>(workspace), workspaceBytes, p);
  }
  attn_status resolve(const ManifestSection &m, const attn_options *opts,
                      int64_t requested, int64_t &n) const {
    return resolveSplits(m, 132, tensors(), opts, requested, n);
  }
};

int runDecode() {
  Manifest parsed;
  if (!setUp(kModule, parsed))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  // The heuristic on 132 SMs, block_kv = 64: (B, Hkv, Sk).
  const int64_t shapes[][3] = {
      {1, 8, 131072}, {8, 8, 131072},        {16, 8, 4096},  {64, 8, 16384},
      {1, 32, 1000},  {1, 8, 100},           {132, 1, 4096}, {1, 1, 1},
      {1, 8, 1024},   {INT64_MAX, 8, 131072}};
  for (const auto &s : shapes)
    std::printf(
        "default-splits B=%lld Hkv=%lld Sk=%lld: %lld\n",
        static_cast<long long>(s[0]), static_cast<long long>(s[1]),
        static_cast<long long>(s[2]),
        static_cast<long long>(defaultSplits(132, s[0], s[1], s[2], 64)));
  // The paged model, Sk the capacity: (B, Hkv, Sk).
  const int64_t pagedShapes[][3] = {
      {8, 8, 7456},   {8, 8, 29792},  {64, 8, 29792}, {64, 8, 7552},
      {1, 8, 131072}, {256, 8, 4096}, {1, 1, 1},      {INT64_MAX, 8, 4096}};
  for (const auto &s : pagedShapes)
    std::printf(
        "paged-default-splits B=%lld Hkv=%lld Sk=%lld: %lld\n",
        static_cast<long long>(s[0]), static_cast<long long>(s[1]),
        static_cast<long long>(s[2]),
        static_cast<long long>(pagedDefaultSplits(132, s[0], s[1], s[2], 64)));
  {
    DecodeArgs a(1, 32, 1000);
    for (int64_t requested : {int64_t(0), int64_t(1), int64_t(1000000)}) {
      int64_t splits = -1;
      attn_status s = a.resolve(m, nullptr, requested, splits);
      std::printf("resolve %lld: %s %lld\n", static_cast<long long>(requested),
                  statusName(s), static_cast<long long>(splits));
    }
    std::printf("workspace 33 splits: %lld\n",
                static_cast<long long>(decodeWorkspaceBytes(&a.q, &a.v, 33)));
    int64_t bytes = decodeWorkspaceBytes(&a.q, &a.v, 0);
    std::printf("workspace 0 splits: %lld: %s\n", static_cast<long long>(bytes),
                attn_last_error());
    // B * Hq * Sq overflows int64 before any byte is counted.
    DecodeArgs huge;
    huge.q.shape[0] = huge.q.shape[2] = int64_t(1) << 40;
    bytes = decodeWorkspaceBytes(&huge.q, &huge.v, 4);
    std::printf("workspace huge rows: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    a.q.rank = 2;
    int64_t splits = -1;
    report("resolve-bad", a.resolve(m, nullptr, 0, splits));
    a = DecodeArgs(1, 32, 1000);
    a.k.dtype = ATTN_F16;
    report("resolve-dtype", a.resolve(m, nullptr, 0, splits));
  }
  {
    DecodeArgs a(1, 8, 131072);
    DecodePlan p;
    report("gqa", a.plan(m, p));
    printDecode("gqa", p);
  }
  {
    // A partial kernel of fewer than 4 warps counts two CTA slots an SM.
    Manifest slots;
    if (!setUp("attn-manifest 1\ntarget sm_80\nptx kernels.ptx\n"
               "kernel d4 kind=decode_partial dtype=bf16 head_dim=128 "
               "value_dim=128 causal=none rows=16 block_kv=64 threads=128 "
               "smem=36864\n"
               "kernel d2 kind=decode_partial dtype=f16 head_dim=128 "
               "value_dim=128 causal=none rows=16 block_kv=32 threads=64 "
               "smem=36864\n"
               "kernel c4 kind=decode_combine dtype=bf16 value_dim=128 "
               "rows=16 block_kv=16 threads=32 smem=0\n"
               "kernel c2 kind=decode_combine dtype=f16 value_dim=128 "
               "rows=16 block_kv=16 threads=32 smem=0\n",
               slots))
      return 1;
    for (attn_dtype dtype : {ATTN_BF16, ATTN_F16}) {
      DecodeArgs a(8, 8, 16384);
      a.q.dtype = a.k.dtype = a.v.dtype = a.o.dtype = dtype;
      int64_t n = -1;
      attn_status s = a.resolve(slots.sections.front(), nullptr, 0, n);
      std::printf("slots %s: %s %lld %s\n",
                  dtype == ATTN_F16 ? "2 warps" : "4 warps", statusName(s),
                  static_cast<long long>(n), s ? attn_last_error() : "");
    }
  }
  {
    DecodeArgs a(2, 8, 1000);
    a.q = bshd(ATTN_BF16, 2, 32, 2, 128, kQ); // Sq = 2: 8 rows per KV head
    a.o = bshd(ATTN_BF16, 2, 32, 2, 128, kO);
    a.lse = lseOf(2, 32, 2, kLse);
    a.splits = 7;
    a.options = {0.0f, ATTN_CAUSAL_BOTTOM_RIGHT, 512, nullptr};
    DecodePlan p;
    report("bshd-sq2", a.plan(m, p));
    printDecode("bshd-sq2", p);
  }
  DecodeArgs a(1, 8, 1000);
  a.splits = 1000000;
  {
    DecodePlan p;
    report("clamped", a.plan(m, p));
    std::printf("clamped: splits=%lld chunk=%lld\n",
                static_cast<long long>(p.numSplits),
                static_cast<long long>(p.chunk));
  }
  planCases<DecodeArgs>(
      m, {
             {"workspace-null", [&](DecodeArgs &a) { a.workspace = 0; }},
             {"workspace-align",
              [&](DecodeArgs &a) { a.workspace = kWorkspace + 16; }},
         });
  a = DecodeArgs();
  a.workspaceBytes = 4096;
  planCase(m, "workspace-small", a);
  a = DecodeArgs(1, 1, 4096); // 32 query rows per KV head: two row tiles
  {
    DecodePlan p;
    if (attn_status s = a.plan(m, p))
      report("rows", s);
    else
      printLaunchHeader("rows", p.partial);
  }
  // 2^45 query rows (Sq = 2^40 of 32 heads): q, o and lse fit int64, the
  // workspace of even one split (2^54 bytes) is past the runtime's 2^50.
  planCases<DecodeArgs>(
      m, {
             {"workspace-rows",
              [&](DecodeArgs &a) {
                for (attn_tensor *t : {&a.q, &a.o})
                  t->shape[2] = int64_t(1) << 40;
                a.lse = lseOf(1, 32, int64_t(1) << 40, kLse);
                a.splits = 1;
              }},
             {"no-kernel-causal",
              [&](DecodeArgs &a) { a.options.causal = ATTN_CAUSAL_TOP_LEFT; }},
             {"dtype-no-kernel",
              [&](DecodeArgs &a) {
                a.q = bhsd(ATTN_F16, 1, 32, 1, 128, kQ);
                a.k = bhsd(ATTN_F16, 1, 8, 4096, 128, kK);
                a.v = bhsd(ATTN_F16, 1, 8, 4096, 128, kV);
                a.o = bhsd(ATTN_F16, 1, 32, 1, 128, kO);
              }},
             {"shape-o", [&](DecodeArgs &a) { a.o.shape[3] = 64; }},
         });
  {
    DecodeArgs b;
    attn_status s =
        attn_decode(nullptr, &b.q, &b.k, &b.v, &b.o, nullptr, nullptr, 0,
                    reinterpret_cast<void *>(kWorkspace), 1 << 20, nullptr);
    report("null-module", s);
    int64_t splits = 0;
    report("null-module-splits",
           attn_decode_splits(nullptr, &b.q, &b.k, &b.v, nullptr, 0, &splits));
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Forward plans with masks
//===----------------------------------------------------------------------===//

constexpr uint64_t kMask = 0x700000;

/// kModule plus forward kernels that take a mask; bf16 d64 has masked
/// kernels only.
std::string maskModule() {
  return std::string(kModule) +
         "kernel fwd_bf16_128_none_add kind=forward dtype=bf16 head_dim=128 "
         "value_dim=128 causal=none mask=add block_q=128 block_kv=64 "
         "threads=256 smem=73728\n"
         "kernel fwd_bf16_128_none_bool kind=forward dtype=bf16 head_dim=128 "
         "value_dim=128 causal=none mask=bool block_q=128 block_kv=64 "
         "threads=256 smem=73728\n"
         "kernel fwd_bf16_128_br_add kind=forward dtype=bf16 head_dim=128 "
         "value_dim=128 causal=bottom_right mask=add block_q=128 block_kv=64 "
         "threads=256 smem=73728\n"
         "kernel fwd_bf16_64_none_bool kind=forward dtype=bf16 head_dim=64 "
         "value_dim=64 causal=none mask=bool block_q=64 block_kv=64 "
         "threads=128 smem=32768\n";
}

/// A mask of logical shape [b, h, sq, sk], contiguous over the sizes given
/// (a dim of size 1 gets the stride a contiguous tensor would give it).
attn_tensor maskOf(attn_dtype dtype, int64_t b, int64_t h, int64_t sq,
                   int64_t sk, uint64_t data = kMask) {
  attn_tensor t = {reinterpret_cast<void *>(data),
                   dtype,
                   4,
                   {b, h, sq, sk},
                   {h * sq * sk, sq * sk, sk, 1}};
  return t;
}

void maskCase(const ManifestSection &m, const char *name, const ForwardArgs &a,
              bool print = false) {
  Launch l;
  attn_status s = a.plan(m, l);
  report(name, s);
  if (s == ATTN_OK && print)
    printForward(name, l);
  else if (s == ATTN_OK)
    std::printf("%s: kernel=%s params=%zu\n", name, l.kernel->name.c_str(),
                l.args.size());
}

int runMask() {
  Manifest parsed;
  if (!setUp(maskModule(), parsed))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  // B=2 Hq=8 Hkv=2 Sq=77 Sk=1000 D=128 bf16 (ForwardArgs).
  ForwardArgs a;
  attn_tensor mask = maskOf(ATTN_BF16, 2, 8, 77, 1000);
  a.options.mask = &mask;
  maskCase(m, "add-full", a, true);

  // PyTorch's expand of a [Sq, Sk] mask: stride 0 over B and Hq.
  mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
  mask.strides[0] = mask.strides[1] = 0;
  a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
  a.options.window = 100;
  a.withLse = false;
  maskCase(m, "add-sq-sk-br", a, true);

  // [B, 1, 1, Sk] boolean with the strides of a contiguous tensor: the
  // broadcast dims go out with stride 0.
  a = ForwardArgs();
  mask = maskOf(ATTN_BOOL, 2, 1, 1, 1000);
  a.options.mask = &mask;
  maskCase(m, "bool-b11k", a, true);

  // A mask expanded to the full size (stride 0 over full dims) is a read
  // like any other; an odd address and odd strides need no alignment.
  mask = maskOf(ATTN_BOOL, 2, 8, 77, 1000, kMask + 1);
  mask.strides[0] = 0;
  mask.strides[1] = 0;
  mask.strides[2] = 1001;
  maskCase(m, "bool-expanded-unaligned", a, true);

  // Negative strides over size-1 dims are never used: passed as 0.
  mask = maskOf(ATTN_BOOL, 1, 1, 77, 1000);
  mask.strides[0] = -5;
  mask.strides[1] = -7;
  maskCase(m, "bool-negative-broadcast-stride", a, true);

  // A column mask [B, Hq, Sq, 1] and a single element.
  mask = maskOf(ATTN_BF16, 2, 8, 77, 1);
  a.options.mask = &mask;
  maskCase(m, "add-column", a, true);
  mask = maskOf(ATTN_BF16, 1, 1, 1, 1);
  maskCase(m, "add-scalar", a);

  // Without a mask the unmasked kernel runs, with the 55 words it had:
  // null options, options without the mask field, options zeroed with
  // memset and then given their fields (window 0 is a window, so a zeroed
  // struct with causal none was an error before masks too).
  {
    a = ForwardArgs();
    Launch l;
    report("null-options",
           planForward(m, 132, &a.q, &a.k, &a.v, &a.o, &a.lse, nullptr, l));
    std::printf("null-options: kernel=%s params=%zu\n", l.kernel->name.c_str(),
                l.args.size());
    attn_options three = {0.0f, ATTN_CAUSAL_NONE, -1};
    report("three-fields",
           planForward(m, 132, &a.q, &a.k, &a.v, &a.o, &a.lse, &three, l));
    std::printf("three-fields: kernel=%s params=%zu\n", l.kernel->name.c_str(),
                l.args.size());
    attn_options zero;
    std::memset(&zero, 0, sizeof(zero));
    zero.window = -1;
    report("zeroed",
           planForward(m, 132, &a.q, &a.k, &a.v, &a.o, &a.lse, &zero, l));
    std::printf("zeroed: kernel=%s params=%zu\n", l.kernel->name.c_str(),
                l.args.size());
  }

  // Kernel selection by mask kind, and what is missing when none fits.
  a = ForwardArgs();
  mask = maskOf(ATTN_BOOL, 2, 8, 77, 1000);
  a.options.mask = &mask;
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  maskCase(m, "no-kernel-bool-top-left", a);
  a = ForwardArgs();
  a.q = bhsd(ATTN_BF16, 2, 8, 77, 64, kQ);
  a.k = bhsd(ATTN_BF16, 2, 2, 1000, 64, kK);
  a.v = bhsd(ATTN_BF16, 2, 2, 1000, 64, kV);
  a.o = bhsd(ATTN_BF16, 2, 8, 77, 64, kO);
  maskCase(m, "no-kernel-d64-unmasked", a);
  mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
  a.options.mask = &mask;
  maskCase(m, "no-kernel-d64-add", a);
  mask = maskOf(ATTN_BOOL, 1, 1, 77, 1000);
  maskCase(m, "d64-bool", a);
  {
    // A module without masked kernels names the missing mask kind too.
    Manifest plain;
    parseManifest(kModule, "m.manifest", plain);
    a = ForwardArgs();
    mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    a.options.mask = &mask;
    maskCase(plain.sections.front(), "no-masked-kernels", a);
  }
  a = ForwardArgs();
  a.q = bhsd(ATTN_F16, 1, 4, 1, 64, kQ);
  a.k = bhsd(ATTN_F16, 1, 1, 4097, 64, kK);
  a.v = bhsd(ATTN_F16, 1, 1, 4097, 64, kV);
  a.o = bhsd(ATTN_F16, 1, 4, 1, 64, kO);
  a.withLse = false;
  mask = maskOf(ATTN_F16, 1, 4, 1, 4097);
  a.options.mask = &mask;
  maskCase(m, "no-kernel-f16-add", a);

  // Argument errors.
  auto withMask = [&](const attn_tensor &t) {
    ForwardArgs b;
    mask = t;
    b.options.mask = &mask;
    return b;
  };
  attn_tensor t = maskOf(ATTN_BF16, 77, 1000, 1, 1);
  t.rank = 2;
  maskCase(m, "mask-rank", withMask(t));
  maskCase(m, "mask-shape-sk", withMask(maskOf(ATTN_BF16, 2, 8, 77, 999)));
  maskCase(m, "mask-shape-hkv", withMask(maskOf(ATTN_BF16, 2, 2, 77, 1000)));
  maskCase(m, "mask-shape-zero", withMask(maskOf(ATTN_BF16, 2, 8, 0, 1000)));
  t = maskOf(ATTN_BF16, 2, 8, 77, 1000);
  t.dtype = static_cast<attn_dtype>(9);
  maskCase(m, "mask-dtype-enum", withMask(t));
  maskCase(m, "mask-dtype", withMask(maskOf(ATTN_F16, 2, 8, 77, 1000)));
  maskCase(m, "mask-dtype-f32", withMask(maskOf(ATTN_F32, 1, 1, 77, 1000)));
  maskCase(m, "mask-dtype-i32", withMask(maskOf(ATTN_I32, 1, 1, 77, 1000)));
  maskCase(m, "mask-null-data", withMask(maskOf(ATTN_BOOL, 2, 8, 77, 1000, 0)));
  t = maskOf(ATTN_BOOL, 2, 8, 77, 1000);
  t.strides[2] = -1000;
  maskCase(m, "mask-stride-negative", withMask(t));
  a = ForwardArgs();
  a.q.dtype = a.k.dtype = a.v.dtype = a.o.dtype = ATTN_BOOL;
  maskCase(m, "q-bool", a);
  a = ForwardArgs();
  a.lse.dtype = ATTN_BOOL;
  maskCase(m, "lse-bool", a);
  // i32 is attn_decode_paged's block table and lengths only.
  a = ForwardArgs();
  a.k.dtype = ATTN_I32;
  maskCase(m, "k-i32", a);
  a = ForwardArgs();
  a.o.dtype = ATTN_I32;
  maskCase(m, "o-i32", a);
  {
    // Decode takes no mask.
    DecodeArgs d;
    attn_tensor dm = maskOf(ATTN_BF16, 1, 32, 1, 131072);
    d.options.mask = &dm;
    DecodePlan p;
    report("decode-mask", d.plan(m, p));
    int64_t splits = 0;
    report("decode-splits-mask", d.resolve(m, &d.options, 0, splits));
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Forward plans with tensor maps (kernels with `tma=`)
//===----------------------------------------------------------------------===//

/// Forward kernels that take tensor maps, as attn-compile writes the sm_90a
/// ones (with and without a mask; f16 d96 with the boxes written out of the
/// ABI's order), and one that takes none.
const char *kTmaModule =
    "attn-manifest 1\n"
    "target sm_90a\n"
    "ptx kernels.ptx\n"
    "kernel fwd_tma kind=forward dtype=bf16 head_dim=128 value_dim=128 "
    "causal=none block_q=128 block_kv=128 threads=256 smem=196608 "
    "tma=q:128x64:128,k:128x64:128,v:128x64:128\n"
    "kernel fwd_tma_add kind=forward dtype=bf16 head_dim=128 value_dim=128 "
    "causal=none mask=add block_q=128 block_kv=128 threads=256 smem=196608 "
    "tma=q:128x64:128,k:128x64:128,v:128x64:128\n"
    "kernel fwd_tma_f16_d96 kind=forward dtype=f16 head_dim=96 value_dim=96 "
    "causal=bottom_right block_q=64 block_kv=64 threads=128 smem=65536 "
    "tma=v:64x32:64,q:64x32:64,k:64x32:64\n"
    "kernel fwd_tl kind=forward dtype=bf16 head_dim=128 value_dim=128 "
    "causal=top_left block_q=128 block_kv=64 threads=256 smem=73728\n"
    "kernel fwd_persistent kind=forward dtype=bf16 head_dim=256 "
    "value_dim=256 causal=none block_q=128 block_kv=64 threads=384 "
    "smem=196656 grid=persistent tma=q:128x64:128,k:64x64:128,v:64x64:128\n"
    "kernel dec_tma kind=decode_partial dtype=bf16 head_dim=128 "
    "value_dim=128 causal=none rows=16 block_kv=64 threads=128 smem=102432 "
    "tma=k:64x64:128,v:64x64:128\n"
    "kernel comb kind=decode_combine dtype=bf16 value_dim=128 rows=16 "
    "block_kv=8 threads=32 smem=0\n";

void printTensorMaps(const Launch &l) {
  for (const TensorMapArg &t : l.tensorMaps)
    std::printf(
        "  %s_tmap: param=%zu word=%llu %s address=0x%llx "
        "dims=[%llu, %llu, %llu, %llu] strides=[%llu, %llu, %llu] "
        "box=[%u, %u, %u, %u] swizzle=%lld\n",
        t.tensor, t.param, static_cast<unsigned long long>(l.args[t.param]),
        dtypeName(t.dtype), static_cast<unsigned long long>(t.address),
        static_cast<unsigned long long>(t.dims[0]),
        static_cast<unsigned long long>(t.dims[1]),
        static_cast<unsigned long long>(t.dims[2]),
        static_cast<unsigned long long>(t.dims[3]),
        static_cast<unsigned long long>(t.strides[0]),
        static_cast<unsigned long long>(t.strides[1]),
        static_cast<unsigned long long>(t.strides[2]), t.box[0], t.box[1],
        t.box[2], t.box[3], static_cast<long long>(t.swizzle));
}

void tmaCase(const ManifestSection &m, const char *name, const ForwardArgs &a,
             bool words = false) {
  Launch l;
  attn_status s = a.plan(m, l);
  report(name, s);
  if (s != ATTN_OK)
    return;
  if (words)
    printForward(name, l);
  else
    printLaunchHeader(name, l);
  printTensorMaps(l);
}

/// ForwardArgs of dtype `dtype` and head dim `d` (B=2 Hq=8 Hkv=2 Sq=77
/// Sk=1000, BHSD).
ForwardArgs forwardOf(attn_dtype dtype, int64_t d) {
  ForwardArgs a;
  a.q = bhsd(dtype, 2, 8, 77, d, kQ);
  a.k = bhsd(dtype, 2, 2, 1000, d, kK);
  a.v = bhsd(dtype, 2, 2, 1000, d, kV);
  a.o = bhsd(dtype, 2, 8, 77, d, kO);
  return a;
}

int runTma() {
  Manifest parsed;
  if (!setUp(kTmaModule, parsed))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  // B=2 Hq=8 Hkv=2 Sq=77 Sk=1000 D=128 bf16 (ForwardArgs).
  ForwardArgs a;
  tmaCase(m, "bhsd", a, true);
  a.q = bshd(ATTN_BF16, 2, 8, 77, 128, kQ);
  a.k = bshd(ATTN_BF16, 2, 2, 1000, 128, kK);
  a.v = bshd(ATTN_BF16, 2, 2, 1000, 128, kV);
  a.o = bshd(ATTN_BF16, 2, 8, 77, 128, kO);
  a.withLse = false;
  tmaCase(m, "bshd", a, true);

  // f16 d96: 192-byte rows in boxes of 32 columns, 64-byte swizzle; the
  // maps follow the ABI's order (q, k, v), not the manifest's.
  a = forwardOf(ATTN_F16, 96);
  a.withLse = false;
  a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
  tmaCase(m, "f16-d96", a);

  // A mask goes after lse, the tensor maps stay last.
  a = ForwardArgs();
  attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
  a.options.mask = &mask;
  tmaCase(m, "mask", a);

  // Dims of size 1 are never stepped over: whatever their strides (here
  // odd, which TMA would reject), their maps get stride 0.
  a = ForwardArgs();
  a.q = bhsd(ATTN_BF16, 1, 1, 77, 128, kQ);
  a.k = bhsd(ATTN_BF16, 1, 1, 1000, 128, kK);
  a.v = bhsd(ATTN_BF16, 1, 1, 1000, 128, kV);
  a.o = bhsd(ATTN_BF16, 1, 1, 77, 128, kO);
  a.lse = lseOf(1, 1, 77, kLse);
  a.q.strides[0] = 3;
  a.q.strides[1] = 5;
  a.k.strides[1] = 7;
  tmaCase(m, "size-one-dims", a);

  // K and V shared by the batch (stride 0 over B) are a valid read.
  a = ForwardArgs();
  a.k.strides[0] = a.v.strides[0] = 0;
  tmaCase(m, "kv-batch-broadcast", a);

  // A kernel without tma= takes no maps.
  a = ForwardArgs();
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  tmaCase(m, "no-tma", a);

  // Errors. A misaligned pointer or a row stride that is not a multiple of
  // 16 bytes fails the checks every kernel has, before the maps.
  a = ForwardArgs();
  misalignPointer(a.q, kQ, 8);
  tmaCase(m, "misaligned", a);
  a = ForwardArgs();
  misalignRowStride(a.k, 1000, 2);
  tmaCase(m, "stride-not-16", a);
  // TMA's own limits: strides below 2^40 bytes, dims of at most 2^32.
  a = ForwardArgs();
  a.k.strides[0] = int64_t(1) << 39; // 2^40 bytes
  tmaCase(m, "stride-2^40", a);
  a = ForwardArgs();
  a.v.strides[0] = (int64_t(1) << 39) - 8; // 2^40 - 16 bytes
  tmaCase(m, "stride-below-2^40", a);
  a = ForwardArgs();
  int64_t sk = (int64_t(1) << 32) + 1;
  a.k = bhsd(ATTN_BF16, 2, 2, sk, 128, kK);
  a.v = bhsd(ATTN_BF16, 2, 2, sk, 128, kV);
  tmaCase(m, "dim-2^32", a);

  // A persistent kernel (grid=persistent): one CTA per SM (132 here), at
  // most one per query tile, on a one-dimensional grid.
  a = forwardOf(ATTN_BF16, 256);
  tmaCase(m, "persistent-16-tiles", a);
  a.q = bhsd(ATTN_BF16, 2, 8, 4096, 256, kQ);
  a.o = bhsd(ATTN_BF16, 2, 8, 4096, 256, kO);
  a.lse = lseOf(2, 8, 4096, kLse);
  tmaCase(m, "persistent-512-tiles", a);
  // The kernel counts its tiles in 32 bits: 2 x 128 x 2^24 = 2^32 refused.
  a.q = bhsd(ATTN_BF16, 2, 128, int64_t(1) << 31, 256, kQ);
  a.o = bhsd(ATTN_BF16, 2, 128, int64_t(1) << 31, 256, kO);
  a.lse = lseOf(2, 128, int64_t(1) << 31, kLse);
  tmaCase(m, "persistent-2^32-tiles", a);

  // The split-KV partial kernel: maps of k and v after its other
  // parameters (B=2, Hq=32, Hkv=8, Sq=1, Sk=1000, D=128, BSHD); the
  // combine takes none.
  DecodeArgs d(2, 8, 1000);
  d.k = bshd(ATTN_BF16, 2, 8, 1000, 128, kK);
  d.v = bshd(ATTN_BF16, 2, 8, 1000, 128, kV);
  DecodePlan p;
  attn_status s = d.plan(m, p);
  report("decode", s);
  if (s == ATTN_OK) {
    printLaunchHeader("decode-partial", p.partial);
    printTensorMaps(p.partial);
    printLaunchHeader("decode-combine", p.combine);
    printTensorMaps(p.combine);
  }
  d.k.strides[0] = int64_t(1) << 39; // 2^40 bytes
  planCase(m, "decode-stride-2^40", d);
  return 0;
}

//===----------------------------------------------------------------------===//
// Paged decode plans (attn_decode_paged)
//===----------------------------------------------------------------------===//

constexpr uint64_t kBlockTable = 0xc00000, kKvLens = 0xd00000;

/// kModule plus paged partial kernels (kv=paged) for bf16 d128 causal none
/// and bottom_right; the combine is kModule's, shared with attn_decode.
std::string pagedModule() {
  return std::string(kModule) +
         "kernel dec_bf16_128_none_paged kind=decode_partial dtype=bf16 "
         "head_dim=128 value_dim=128 causal=none kv=paged rows=16 "
         "block_kv=64 threads=128 smem=54272\n"
         "kernel dec_bf16_128_br_paged kind=decode_partial dtype=bf16 "
         "head_dim=128 value_dim=128 causal=bottom_right kv=paged rows=16 "
         "block_kv=64 threads=128 smem=54272\n";
}

/// A block table i32 [b, maxPages], rows contiguous.
attn_tensor blockTableOf(int64_t b, int64_t maxPages,
                         uint64_t data = kBlockTable) {
  attn_tensor t = {reinterpret_cast<void *>(data),
                   ATTN_I32,
                   2,
                   {b, maxPages, 0, 0},
                   {maxPages, 1, 0, 0}};
  return t;
}

/// Sequence lengths i32 [b].
attn_tensor kvLensOf(int64_t b, uint64_t data = kKvLens) {
  attn_tensor t = {
      reinterpret_cast<void *>(data), ATTN_I32, 1, {b, 0, 0, 0}, {1, 0, 0, 0}};
  return t;
}

struct PagedArgs {
  using Plan = DecodePlan;
  attn_tensor q, k, v, blockTable, kvLens, o, lse;
  attn_options options = {0.0f, ATTN_CAUSAL_NONE, -1, nullptr};
  int64_t splits = 0;
  uint64_t workspace = kWorkspace;
  int64_t workspaceBytes = int64_t(1) << 30;

  /// B, Hq=32, Hkv, Sq=1, D=Dv=128, bf16, q and o BHSD; pools of `pages`
  /// pages of `pageSize` keys in vLLM's storage, [P, page_size, Hkv, D]
  /// (logical [P, Hkv, page_size, D]), and a block table of `maxPages`
  /// pages per sequence.
  explicit PagedArgs(int64_t b = 4, int64_t hkv = 8, int64_t pages = 1000,
                     int64_t pageSize = 16, int64_t maxPages = 512) {
    q = bhsd(ATTN_BF16, b, 32, 1, 128, kQ);
    k = bshd(ATTN_BF16, pages, hkv, pageSize, 128, kK);
    v = bshd(ATTN_BF16, pages, hkv, pageSize, 128, kV);
    blockTable = blockTableOf(b, maxPages);
    kvLens = kvLensOf(b);
    o = bhsd(ATTN_BF16, b, 32, 1, 128, kO);
    lse = lseOf(b, 32, 1, kLse);
  }
  /// q, o and lse of Sq = `sq` (BHSD).
  void setSeqQ(int64_t sq) {
    q = bhsd(ATTN_BF16, q.shape[0], q.shape[1], sq, 128, kQ);
    o = bhsd(ATTN_BF16, o.shape[0], o.shape[1], sq, 128, kO);
    lse = lseOf(lse.shape[0], lse.shape[1], sq, kLse);
  }
  DecodeTensors tensors() const {
    DecodeTensors t;
    t.q = &q;
    t.k = &k;
    t.v = &v;
    t.blockTable = &blockTable;
    t.kvLens = &kvLens;
    t.o = &o;
    t.lse = &lse;
    t.paged = true;
    return t;
  }
  attn_status plan(const ManifestSection &m, DecodePlan &p) const {
    return planDecode(m, 132, tensors(), &options, splits,
                      reinterpret_cast<void *>(workspace), workspaceBytes, p);
  }
  attn_status resolve(const ManifestSection &m, int64_t requested,
                      int64_t &n) const {
    return resolveSplits(m, 132, tensors(), &options, requested, n);
  }
  /// The same call through the C API.
  attn_status call(attn_module *module, void *stream) const {
    return attn_decode_paged(
        module, &q, &k, &v, &blockTable, &kvLens, &o, &lse, &options, splits,
        reinterpret_cast<void *>(workspace), workspaceBytes, stream);
  }
};

void printPaged(const char *name, const DecodePlan &p) {
  std::printf("%s: splits=%lld chunk=%lld workspace=%lld\n", name,
              static_cast<long long>(p.numSplits),
              static_cast<long long>(p.chunk),
              static_cast<long long>(p.workspaceBytes));
  printLaunchHeader(name, p.partial);
  const std::vector<uint64_t> &args = p.partial.args;
  size_t at = 0;
  at = printMemref("q", args, at, 4);
  at = printMemref("k_cache", args, at, 4);
  at = printMemref("v_cache", args, at, 4);
  at = printMemref("kv_lens", args, at, 1);
  at = printMemref("block_table", args, at, 2);
  at = printMemref("partial_o", args, at, 5);
  at = printMemref("partial_lse", args, at, 4);
  if (p.partial.kernel->balanced)
    at = printMemref("split_offsets", args, at, 1);
  std::printf("  scale_log2=%.6f window=%lld\n", f32Word(args[at]),
              static_cast<long long>(args[at + 1]));
  printLaunchHeader(name, p.combine);
}

/// Plans paged decode call `a` against `m`, reports its status under
/// `name` and prints the plan.
DecodePlan planPaged(const ManifestSection &m, const char *name,
                     const PagedArgs &a) {
  DecodePlan p;
  report(name, a.plan(m, p));
  printPaged(name, p);
  return p;
}

/// What attn_decode_workspace_size says for `a`'s tensors at `p`'s split
/// count.
void printPagedWorkspace(const char *name, const PagedArgs &a,
                         const DecodePlan &p) {
  std::printf("%s: attn_decode_workspace_size(q, v_cache, %lld) = %lld\n", name,
              static_cast<long long>(p.numSplits),
              static_cast<long long>(
                  attn_decode_workspace_size(&a.q, &a.v, p.numSplits)));
}

int runPaged() {
  Manifest parsed, plain;
  if (!setUp(pagedModule(), parsed) || !setUp(kModule, plain))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  {
    // vLLM's pools (B=4, Hkv=8, 1000 pages of 16 keys) and a table of 512
    // pages: the splits are the paged model's for Sk = 512 x 16 = 8192
    // keys, the capacity.
    PagedArgs a;
    printPagedWorkspace("vllm", a, planPaged(m, "vllm", a));
    DecodeArgs dense(4, 8, 8192);
    int64_t denseSplits = 0;
    dense.resolve(m, nullptr, 0, denseSplits);
    std::printf("vllm: attn_decode of Sk = 8192 uses %lld splits\n",
                static_cast<long long>(denseSplits));
  }
  {
    // Pools [P, Hkv, page_size, D] (FlashInfer's HND), pages of 128 keys,
    // Sq = 4 rows per query head (16 rows per KV head: one row tile),
    // bottom_right with a window, 3 splits asked for.
    PagedArgs a(2, 8, 64, 128, 40);
    a.k = bhsd(ATTN_BF16, 64, 8, 128, 128, kK);
    a.v = bhsd(ATTN_BF16, 64, 8, 128, 128, kV);
    a.setSeqQ(4);
    a.options = {0.5f, ATTN_CAUSAL_BOTTOM_RIGHT, 100, nullptr};
    a.splits = 3;
    planPaged(m, "hnd-br-sq4", a);
  }
  {
    // The split count: the default for the capacity, one, and a request
    // past the key tiles of the capacity (ceil(8192 / 64) = 128), clamped.
    PagedArgs a;
    for (int64_t requested : {int64_t(0), int64_t(1), int64_t(1000000)}) {
      int64_t splits = -1;
      attn_status s = a.resolve(m, requested, splits);
      std::printf("resolve %lld: %s %lld\n", static_cast<long long>(requested),
                  statusName(s), static_cast<long long>(splits));
    }
    a = PagedArgs(1, 8, 4, 16, 1); // one page per sequence: one key tile
    int64_t splits = -1;
    a.resolve(m, 1000000, splits);
    std::printf("resolve one page: %lld\n", static_cast<long long>(splits));
  }
  {
    // 32 query heads on one KV head: 32 packed rows, two row tiles.
    PagedArgs a(2, 1, 100, 16, 10);
    DecodePlan p;
    if (attn_status s = a.plan(m, p))
      report("rows", s);
    else
      printLaunchHeader("rows", p.partial);
  }
  {
    // Pages of one key, one page per sequence.
    PagedArgs a(3, 8, 7, 1, 1);
    DecodePlan p;
    report("page-size-1", a.plan(m, p));
    std::printf("page-size-1: splits=%lld chunk=%lld grid=(%u, %u, %u)\n",
                static_cast<long long>(p.numSplits),
                static_cast<long long>(p.chunk), p.partial.grid[0],
                p.partial.grid[1], p.partial.grid[2]);
  }
  {
    // One block table row shared by every sequence (stride 0 over B) is a
    // valid read, as for the other inputs.
    PagedArgs a;
    a.blockTable.strides[0] = 0;
    planCase(m, "block-table-broadcast", a);
    // The most keys kv_lens can count: 2^31 - 1 pages of one key.
    a = PagedArgs(1, 8, 16, 1, INT32_MAX);
    a.splits = 1;
    planCase(m, "capacity-2^31-1", a);
  }
  // Lookup: attn_decode never takes a paged kernel, attn_decode_paged only
  // a paged one; both take the same combine.
  {
    DecodeArgs d(4, 8, 8192);
    DecodePlan p;
    report("unpaged-call", d.plan(m, p));
    std::printf("unpaged-call: %s, %s\n", p.partial.kernel->name.c_str(),
                p.combine.kernel->name.c_str());
    Manifest onlyPaged;
    parseManifest(
        "attn-manifest 1\ntarget sm_90a\nptx k.ptx\n"
        "kernel dec_paged kind=decode_partial dtype=bf16 head_dim=128 "
        "value_dim=128 causal=none kv=paged rows=16 block_kv=64 "
        "threads=128 smem=0\n"
        "kernel comb kind=decode_combine dtype=bf16 value_dim=128 rows=16 "
        "threads=32 smem=0\n",
        "m.manifest", onlyPaged);
    report("unpaged-call-paged-module", d.plan(onlyPaged.sections.front(), p));
    PagedArgs a;
    report("paged-call", a.plan(onlyPaged.sections.front(), p));
    std::printf("paged-call: %s, %s\n", p.partial.kernel->name.c_str(),
                p.combine.kernel->name.c_str());
  }
  planCase(plain.sections.front(), "no-paged-kernels", PagedArgs());
  PagedArgs a;
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  planCase(m, "no-kernel-top-left", a);
  a = PagedArgs();
  for (attn_tensor *t : {&a.q, &a.k, &a.v, &a.o})
    t->dtype = ATTN_F16;
  planCase(m, "dtype-no-kernel", a);

  // Every argument error, in the order of the checks.
  {
    DecodePlan p;
    for (const char *which :
         {"q", "k_cache", "v_cache", "block_table", "kv_lens", "o"}) {
      PagedArgs b;
      DecodeTensors t = b.tensors();
      const attn_tensor **slot =
          std::strcmp(which, "q") == 0             ? &t.q
          : std::strcmp(which, "k_cache") == 0     ? &t.k
          : std::strcmp(which, "v_cache") == 0     ? &t.v
          : std::strcmp(which, "block_table") == 0 ? &t.blockTable
          : std::strcmp(which, "kv_lens") == 0     ? &t.kvLens
                                                   : &t.o;
      *slot = nullptr;
      std::string name = std::string("null-") + which;
      report(name.c_str(),
             planDecode(m, 132, t, nullptr, 0,
                        reinterpret_cast<void *>(kWorkspace), 1 << 30, p));
    }
  }
  planCases<PagedArgs>(
      m,
      {
          {"null-k-cache-data", [&](PagedArgs &a) { a.k.data = nullptr; }},
          {"null-block-table-data",
           [&](PagedArgs &a) { a.blockTable.data = nullptr; }},
          {"null-kv-lens-data", [&](PagedArgs &a) { a.kvLens.data = nullptr; }},
          {"rank-k-cache", [&](PagedArgs &a) { a.k.rank = 5; }},
          {"rank-block-table", [&](PagedArgs &a) { a.blockTable.rank = 1; }},
          {"rank-kv-lens", [&](PagedArgs &a) { a.kvLens.rank = 2; }},
          {"dtype-block-table",
           [&](PagedArgs &a) { a.blockTable.dtype = ATTN_BF16; }},
          {"dtype-kv-lens", [&](PagedArgs &a) { a.kvLens.dtype = ATTN_F32; }},
          {"dtype-block-table-bool",
           [&](PagedArgs &a) { a.blockTable.dtype = ATTN_BOOL; }},
          {"dtype-kv-lens-enum",
           [&](PagedArgs &a) { a.kvLens.dtype = static_cast<attn_dtype>(9); }},
          {"dtype-k-cache-i32", [&](PagedArgs &a) { a.k.dtype = ATTN_I32; }},
      });
  tensorDtypeCases<PagedArgs>(m);
  planCases<PagedArgs>(
      m,
      {
          {"shape-pool-pages",
           [&](PagedArgs &a) { a.v = bshd(ATTN_BF16, 999, 8, 16, 128, kV); }},
          {"shape-pool-hkv",
           [&](PagedArgs &a) { a.v = bshd(ATTN_BF16, 1000, 4, 16, 128, kV); }},
          {"shape-pool-page-size",
           [&](PagedArgs &a) { a.v = bshd(ATTN_BF16, 1000, 8, 32, 128, kV); }},
          {"shape-head-dim",
           [&](PagedArgs &a) { a.k = bshd(ATTN_BF16, 1000, 8, 16, 64, kK); }},
          {"shape-o-value-dim",
           [&](PagedArgs &a) { a.o = bhsd(ATTN_BF16, 4, 32, 1, 64, kO); }},
          {"shape-gqa",
           [&](PagedArgs &a) {
             a = PagedArgs(4, 8);
             a.k = bshd(ATTN_BF16, 1000, 5, 16, 128, kK);
             a.v = bshd(ATTN_BF16, 1000, 5, 16, 128, kV);
           }},
          {"shape-page-size-0",
           [&](PagedArgs &a) { a.k.shape[2] = a.v.shape[2] = 0; }},
          {"shape-no-pages",
           [&](PagedArgs &a) { a.k.shape[0] = a.v.shape[0] = 0; }},
          {"shape-max-pages-0",
           [&](PagedArgs &a) { a.blockTable = blockTableOf(4, 0); }},
          {"shape-block-table-batch",
           [&](PagedArgs &a) { a.blockTable = blockTableOf(3, 512); }},
          {"shape-kv-lens-batch",
           [&](PagedArgs &a) { a.kvLens = kvLensOf(5); }},
          {"shape-o",
           [&](PagedArgs &a) { a.o = bhsd(ATTN_BF16, 3, 32, 1, 128, kO); }},
          {"shape-lse", [&](PagedArgs &a) { a.lse = lseOf(4, 32, 2, kLse); }},
          // max_pages x page_size past what kv_lens (i32) counts, and past
          // int64.
          {"capacity-2^31",
           [&](PagedArgs &a) { a = PagedArgs(1, 8, 16, 1, int64_t(1) << 31); }},
          {"capacity-overflow",
           [&](PagedArgs &a) {
             a = PagedArgs(1, 8, 16, int64_t(1) << 32, int64_t(1) << 32);
             a.k.strides[0] = a.v.strides[0] = 0;
           }},
          {"stride-k-cache-last", [&](PagedArgs &a) { a.k.strides[3] = 2; }},
          {"stride-block-table-last",
           [&](PagedArgs &a) {
             a.blockTable.strides[0] = 1;
             a.blockTable.strides[1] = 4; // column-major
           }},
          {"stride-kv-lens", [&](PagedArgs &a) { a.kvLens.strides[0] = 2; }},
          {"stride-block-table-negative",
           [&](PagedArgs &a) { a.blockTable.strides[0] = -512; }},
          {"extent-block-table",
           [&](PagedArgs &a) { a.blockTable.strides[0] = INT64_MAX; }},
          {"align-k-cache", [&](PagedArgs &a) { misalignPointer(a.k, kK, 8); }},
          {"align-v-cache-rows",
           [&](PagedArgs &a) { misalignRowStride(a.v, 16, 8); }},
          {"align-block-table",
           [&](PagedArgs &a) {
             misalignPointer(a.blockTable, kBlockTable, 2);
           }},
          {"align-kv-lens",
           [&](PagedArgs &a) { misalignPointer(a.kvLens, kKvLens, 1); }},
          {"align-block-table-4",
           [&](PagedArgs &a) {
             a.blockTable =
                 blockTableOf(4, 513, kBlockTable + 4); // 4-byte aligned
           }},
      });
  optionCases<PagedArgs>(m);
  {
    PagedArgs b;
    attn_tensor mask = maskOf(ATTN_BF16, 4, 32, 1, 8192);
    b.options.mask = &mask;
    planCase(m, "mask", b);
  }
  planCases<PagedArgs>(
      m,
      {
          {"workspace-null", [&](PagedArgs &a) { a.workspace = 0; }},
          {"workspace-align",
           [&](PagedArgs &a) { a.workspace = kWorkspace + 64; }},
          {"workspace-small", [&](PagedArgs &a) { a.workspaceBytes = 4096; }},
      });

  // The C API's own checks.
  {
    PagedArgs b;
    report("null-module", b.call(nullptr, nullptr));
    int64_t splits = 0;
    report("null-module-splits",
           attn_decode_paged_splits(nullptr, &b.q, &b.k, &b.v, &b.blockTable,
                                    &b.kvLens, nullptr, 0, &splits));
    report("null-splits",
           attn_decode_paged_splits(reinterpret_cast<attn_module *>(0x1), &b.q,
                                    &b.k, &b.v, &b.blockTable, &b.kvLens,
                                    nullptr, 0, nullptr));
    b.kvLens.rank = 3;
    report("splits-rank-kv-lens", b.resolve(m, 0, splits));
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Balanced paged decode plans (splits=balanced)
//===----------------------------------------------------------------------===//

/// The params of the balanced kernels, as attn-compile writes them.
const char *kBalancedPartialParams =
    "q:memref4,k:memref4,v:memref4,kv_lens:memref1,block_table:memref2,"
    "partial_o:memref5,partial_lse:memref4,split_offsets:memref1,"
    "scale_log2:f32,window:i64";
const char *kBalancedCombineParams =
    "partial_o:memref5,partial_lse:memref4,split_offsets:memref1,o:memref4,"
    "lse:memref3";

/// pagedModule() plus the balanced pair for bf16 d128 causal none (the
/// bottom_right call keeps its per-sequence kernel), and a balanced
/// partial kernel for f16 d64, whose combine is a per-sequence one only.
std::string balancedModule() {
  return pagedModule() +
         "kernel dec_bf16_128_none_paged_balanced kind=decode_partial "
         "dtype=bf16 head_dim=128 value_dim=128 causal=none kv=paged "
         "splits=balanced rows=16 block_kv=64 threads=128 smem=54272 "
         "params=" +
         kBalancedPartialParams +
         "\n"
         "kernel comb_bf16_128_balanced kind=decode_combine dtype=bf16 "
         "value_dim=128 splits=balanced rows=16 block_kv=16 threads=32 "
         "smem=0 params=" +
         kBalancedCombineParams +
         "\n"
         "kernel dec_f16_64_none_paged_balanced kind=decode_partial "
         "dtype=f16 head_dim=64 value_dim=64 causal=none kv=paged "
         "splits=balanced rows=16 block_kv=64 threads=128 smem=0\n"
         "kernel comb_f16_64 kind=decode_combine dtype=f16 value_dim=64 "
         "rows=16 threads=32 smem=0\n";
}

/// The combine's words: partial_o, partial_lse, the balanced kernel's
/// split_offsets, o and lse.
void printCombine(const Launch &l) {
  size_t at = 0;
  at = printMemref("partial_o", l.args, at, 5);
  at = printMemref("partial_lse", l.args, at, 4);
  if (l.kernel->balanced)
    at = printMemref("split_offsets", l.args, at, 1);
  at = printMemref("o", l.args, at, 4);
  printMemref("lse", l.args, at, 3);
}

/// The manifest key splits= (balanced, on decode_partial with kv=paged and
/// decode_combine), the ABI of the balanced kernels, the split counts of
/// balancedDefaultSplits, and the plans of attn_decode_paged on a module
/// with balanced kernels: which pair serves each call, the grid of W = N x
/// B work items, the words (partial_o and partial_lse as W items,
/// split_offsets at the workspace's end) and the errors.
int runBalanced() {
  std::string h = kHeader;
  const std::string dec = "kernel d kind=decode_partial dtype=bf16 "
                          "head_dim=128 value_dim=128 causal=none rows=16 "
                          "block_kv=64 threads=128 smem=0";
  const std::string comb = "kernel c kind=decode_combine dtype=bf16 "
                           "value_dim=128 rows=16 threads=32 smem=0";
  {
    // A balanced and a per-sequence kernel of each kind are two kernels.
    Manifest m;
    report("manifest-valid",
           parseManifest(
               h + dec + " kv=paged\n" + dec.substr(0, 8) + "_balanced" +
                   dec.substr(8) + " kv=paged splits=balanced params=" +
                   kBalancedPartialParams + "\n" + comb + "\n" +
                   comb.substr(0, 8) + "_balanced" + comb.substr(8) +
                   " splits=balanced params=" + kBalancedCombineParams + "\n",
               "m.manifest", m));
    const ManifestSection &section = m.sections.front();
    for (const KernelSpec &k : section.kernels)
      std::printf("  line %d: %s (%s) params=%zu: %s\n", k.line, k.name.c_str(),
                  abiName(k).c_str(), abiParamSizes(k).size(),
                  abiParamList(k).c_str());
    for (KernelKind kind :
         {KernelKind::DecodePartial, KernelKind::DecodeCombine})
      std::printf("manifest-valid: %s: %s\n", kernelKindName(kind),
                  section.describe(kind).c_str());
  }
  parseCase("splits-bad-value", h + dec + " kv=paged splits=even\n");
  parseCase("splits-forward", h + kFwd + " splits=balanced\n");
  parseCase("splits-backward",
            h + "kernel b kind=backward_dot dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none block_q=64 block_kv=64 "
                "threads=128 smem=0 splits=balanced\n");
  parseCase("splits-unpaged", h + dec + " splits=balanced\n");
  parseCase("splits-params-without-offsets",
            h + dec +
                " kv=paged splits=balanced params=q:memref4,k:memref4,"
                "v:memref4,kv_lens:memref1,block_table:memref2,"
                "partial_o:memref5,partial_lse:memref4,scale_log2:f32,"
                "window:i64\n");
  parseCase("splits-combine-params-without-key",
            h + comb + " params=" + kBalancedCombineParams + "\n");
  parseCase("splits-duplicate-config",
            h + comb + " splits=balanced\n" + comb.substr(0, 8) + "2" +
                comb.substr(8) + " splits=balanced\n");

  // The model on 132 SMs, block_kv = 64, Sk the capacity: (B, CTAs per
  // item, Sk).
  const int64_t shapes[][3] = {
      {4, 8, 8192},   {8, 8, 7456},        {8, 8, 29792},  {64, 8, 29792},
      {64, 8, 7552},  {1, 8, 131072},      {256, 8, 4096}, {1, 1, 1},
      {2, 1, 100000}, {INT64_MAX, 8, 4096}};
  for (const auto &shape : shapes)
    std::printf("balanced-default-splits B=%lld Hkv=%lld Sk=%lld: %lld\n",
                static_cast<long long>(shape[0]),
                static_cast<long long>(shape[1]),
                static_cast<long long>(shape[2]),
                static_cast<long long>(balancedDefaultSplits(
                    132, shape[0], shape[1], shape[2], 64)));

  Manifest parsed;
  if (!setUp(balancedModule(), parsed))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  {
    // vLLM's pools (B=4, Hkv=8, 1000 pages of 16 keys) and a table of 512
    // pages: the balanced pair, the default count of balancedDefaultSplits
    // for Sk = 8192, W = N x B items in grid x.
    PagedArgs a;
    DecodePlan p = planPaged(m, "vllm", a);
    printCombine(p.combine);
    printPagedWorkspace("vllm", a, p);
  }
  {
    // Pools [P, Hkv, page_size, D] (FlashInfer's HND), pages of 128 keys,
    // Sq = 4, 3 splits asked for: 3 x 2 items; 16 rows per KV head (one
    // row tile).
    PagedArgs a(2, 8, 64, 128, 40);
    a.k = bhsd(ATTN_BF16, 64, 8, 128, 128, kK);
    a.v = bhsd(ATTN_BF16, 64, 8, 128, 128, kV);
    a.setSeqQ(4);
    a.options.scale = 0.5f;
    a.splits = 3;
    printCombine(planPaged(m, "hnd-sq4", a).combine);
  }
  {
    // The split count: the default, one (B items, one per sequence), a
    // request past the capacity's key tiles (128), clamped.
    PagedArgs a;
    for (int64_t requested : {int64_t(0), int64_t(1), int64_t(1000000)}) {
      int64_t splits = -1;
      attn_status s = a.resolve(m, requested, splits);
      a.splits = requested;
      DecodePlan p;
      a.plan(m, p);
      std::printf("resolve %lld: %s %lld chunk=%lld grid=(%u, %u, %u)\n",
                  static_cast<long long>(requested), statusName(s),
                  static_cast<long long>(splits),
                  static_cast<long long>(p.chunk), p.partial.grid[0],
                  p.partial.grid[1], p.partial.grid[2]);
    }
  }
  {
    // 32 query heads on one KV head: two row tiles in grid y, as before.
    PagedArgs a(2, 1, 100, 16, 10);
    a.splits = 2;
    DecodePlan p;
    if (attn_status s = a.plan(m, p))
      report("rows", s);
    else
      printLaunchHeader("rows", p.partial);
  }
  {
    // A call without a balanced partial kernel keeps its per-sequence
    // pair, and attn_decode never takes a balanced kernel.
    PagedArgs a;
    a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    DecodePlan p;
    report("bottom-right", a.plan(m, p));
    std::printf("bottom-right: %s, %s splits=%lld grid=(%u, %u, %u)\n",
                p.partial.kernel->name.c_str(), p.combine.kernel->name.c_str(),
                static_cast<long long>(p.numSplits), p.partial.grid[0],
                p.partial.grid[1], p.partial.grid[2]);
    DecodeArgs d(4, 8, 8192);
    report("unpaged-call", d.plan(m, p));
    std::printf("unpaged-call: %s, %s\n", p.partial.kernel->name.c_str(),
                p.combine.kernel->name.c_str());
  }
  {
    // A balanced partial kernel whose dtype and Dv have no balanced
    // combine.
    PagedArgs a;
    a.q = bhsd(ATTN_F16, 4, 32, 1, 64, kQ);
    a.k = bshd(ATTN_F16, 1000, 8, 16, 64, kK);
    a.v = bshd(ATTN_F16, 1000, 8, 16, 64, kV);
    a.o = bhsd(ATTN_F16, 4, 32, 1, 64, kO);
    planCase(m, "no-balanced-combine", a);
    int64_t splits = 0;
    report("no-balanced-combine-splits", a.resolve(m, 0, splits));
  }
  planCases<PagedArgs>(
      m,
      {
          {"workspace-null", [&](PagedArgs &a) { a.workspace = 0; }},
          {"workspace-small", [&](PagedArgs &a) { a.workspaceBytes = 4096; }},
          // 2^24 sequences of 256 splits: 2^32 items, past grid x.
          {"grid-items",
           [&](PagedArgs &a) {
             a = PagedArgs(int64_t(1) << 24, 8, 1000, 16, 1024);
             a.splits = 256;
             a.workspaceBytes = int64_t(1) << 50;
           }},
      });
  return 0;
}

//===----------------------------------------------------------------------===//
// Packed (variable-length) forward plans (attn_forward_varlen)
//===----------------------------------------------------------------------===//

constexpr uint64_t kQueryOffsets = 0xe00000, kKeyOffsets = 0xf00000;

/// kModule plus packed forward kernels (q=packed): bf16 d128 with packed
/// keys (kv=packed) for causal none and bottom_right, on a paged cache
/// (kv=paged) for bottom_right only, and f16 d64 top_left with packed keys.
std::string varlenModule() {
  return std::string(kModule) +
         "kernel fwd_bf16_128_none_varlen kind=forward dtype=bf16 "
         "head_dim=128 value_dim=128 causal=none q=packed kv=packed "
         "block_q=128 block_kv=32 threads=128 smem=87040\n"
         "kernel fwd_bf16_128_br_varlen kind=forward dtype=bf16 head_dim=128 "
         "value_dim=128 causal=bottom_right q=packed kv=packed block_q=128 "
         "block_kv=64 threads=256 smem=139264\n"
         "kernel fwd_bf16_128_br_chunked kind=forward dtype=bf16 "
         "head_dim=128 value_dim=128 causal=bottom_right q=packed kv=paged "
         "block_q=128 block_kv=64 threads=256 smem=139264\n"
         "kernel fwd_f16_64_tl_varlen kind=forward dtype=f16 head_dim=64 "
         "value_dim=64 causal=top_left q=packed kv=packed block_q=64 "
         "block_kv=64 threads=128 smem=73728\n";
}

/// Offsets i32 [entries] (B + 1), contiguous.
attn_tensor offsetsOf(int64_t entries, uint64_t data) {
  attn_tensor t = {reinterpret_cast<void *>(data),
                   ATTN_I32,
                   1,
                   {entries, 0, 0, 0},
                   {1, 0, 0, 0}};
  return t;
}

struct VarlenArgs {
  using Plan = Launch;
  attn_tensor q, k, v, queryOffsets, keyOffsets, kvLens, blockTable, o, lse;
  attn_options options = {0.0f, ATTN_CAUSAL_NONE, -1, nullptr};
  int64_t maxSeqlenQ = 0;
  bool paged, withLse = true;

  /// B sequences, Hq=32, Hkv=8, D=Dv=128, bf16, in FlashAttention's varlen
  /// storage [T, H, D] (logical [1, H, T, D]): T query rows, and packed
  /// keys of Tk rows or (`paged`) vLLM's pools [P, page_size, Hkv, D] of
  /// 1000 pages of 16 keys with a block table of 256 pages per sequence.
  explicit VarlenArgs(bool paged = false, int64_t b = 4, int64_t t = 1000,
                      int64_t tk = 3000)
      : paged(paged) {
    q = bshd(ATTN_BF16, 1, 32, t, 128, kQ);
    if (paged) {
      k = bshd(ATTN_BF16, 1000, 8, 16, 128, kK);
      v = bshd(ATTN_BF16, 1000, 8, 16, 128, kV);
    } else {
      k = bshd(ATTN_BF16, 1, 8, tk, 128, kK);
      v = bshd(ATTN_BF16, 1, 8, tk, 128, kV);
    }
    queryOffsets = offsetsOf(b + 1, kQueryOffsets);
    keyOffsets = offsetsOf(b + 1, kKeyOffsets);
    kvLens = kvLensOf(b);
    blockTable = blockTableOf(b, 256);
    o = bshd(ATTN_BF16, 1, 32, t, 128, kO);
    lse = lseOf(1, 32, t, kLse);
  }
  /// q, o and lse of `t` rows.
  void setRows(int64_t t) {
    q = bshd(q.dtype, 1, q.shape[1], t, q.shape[3], kQ);
    o = bshd(o.dtype, 1, o.shape[1], t, o.shape[3], kO);
    lse = lseOf(1, lse.shape[1], t, kLse);
  }
  ForwardTensors tensors() const {
    ForwardTensors t;
    t.q = &q;
    t.k = &k;
    t.v = &v;
    t.queryOffsets = &queryOffsets;
    if (paged) {
      t.kvLens = &kvLens;
      t.blockTable = &blockTable;
    } else {
      t.keyOffsets = &keyOffsets;
    }
    t.o = &o;
    t.lse = withLse ? &lse : nullptr;
    return t;
  }
  attn_status plan(const ManifestSection &m, Launch &l) const {
    return planForwardVarlen(m, tensors(), maxSeqlenQ, &options, l);
  }
  /// The same call through the C API.
  attn_status call(attn_module *module, void *stream) const {
    ForwardTensors t = tensors();
    return attn_forward_varlen(module, t.q, t.k, t.v, t.queryOffsets,
                               t.keyOffsets, t.kvLens, t.blockTable, t.o, t.lse,
                               maxSeqlenQ, &options, stream);
  }
};

void printVarlen(const char *name, const Launch &l) {
  printLaunchHeader(name, l);
  size_t at = 0;
  at = printMemref("q", l.args, at, 4);
  at = printMemref("k", l.args, at, 4);
  at = printMemref("v", l.args, at, 4);
  at = printMemref("query_offsets", l.args, at, 1);
  if (l.kernel->paged) {
    at = printMemref("kv_lens", l.args, at, 1);
    at = printMemref("block_table", l.args, at, 2);
  } else {
    at = printMemref("key_offsets", l.args, at, 1);
  }
  at = printMemref("o", l.args, at, 4);
  at = printMemref("lse", l.args, at, 3);
  std::printf("  scale_log2=%.6f window=%lld\n", f32Word(l.args[at]),
              static_cast<long long>(l.args[at + 1]));
}

int runVarlen() {
  Manifest parsed, plain;
  if (!setUp(varlenModule(), parsed) || !setUp(kModule, plain))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  {
    // Varlen prefill: 4 sequences of at most 300 queries in T = 1000 rows,
    // their keys packed in Tk = 3000 rows: query_offsets and key_offsets
    // (rank 1, [B + 1]) right after v; grid (ceil(300 / 128), Hq, B).
    VarlenArgs a;
    a.maxSeqlenQ = 300;
    Launch l;
    report("packed", a.plan(m, l));
    printVarlen("packed", l);
  }
  {
    // The grid's x for max_seqlen_q: <= 0 means T = 1000 (8 tiles of 128),
    // more than T is clamped to T; the tiles of block_q = 128 rows.
    VarlenArgs a;
    for (int64_t rows : {int64_t(0), int64_t(-1), int64_t(1), int64_t(128),
                         int64_t(129), int64_t(1000), int64_t(5000)}) {
      a.maxSeqlenQ = rows;
      Launch l;
      attn_status s = a.plan(m, l);
      std::printf("grid max_seqlen_q=%lld: %s (%u, %u, %u)\n",
                  static_cast<long long>(rows), statusName(s), l.grid[0],
                  l.grid[1], l.grid[2]);
    }
  }
  {
    // Chunked prefill: new queries against vLLM's pools, bottom_right with
    // a window, scale 0.5, no LSE (its descriptor [1, Hq, T] with a null
    // pointer): kv_lens (rank 1) and block_table (rank 2) after
    // query_offsets.
    VarlenArgs a(/*paged=*/true, 3, 77);
    a.options = {0.5f, ATTN_CAUSAL_BOTTOM_RIGHT, 256, nullptr};
    a.withLse = false;
    a.maxSeqlenQ = 40;
    Launch l;
    report("chunked", a.plan(m, l));
    printVarlen("chunked", l);
  }
  {
    // q, k, v, o as [1, H, T, D] (BHSD), f16 d64, one sequence; GQA 4.
    VarlenArgs a(false, 1, 77, 500);
    a.q = bhsd(ATTN_F16, 1, 8, 77, 64, kQ);
    a.k = bhsd(ATTN_F16, 1, 2, 500, 64, kK);
    a.v = bhsd(ATTN_F16, 1, 2, 500, 64, kV);
    a.o = bhsd(ATTN_F16, 1, 8, 77, 64, kO);
    a.lse = lseOf(1, 8, 77, kLse);
    a.options.causal = ATTN_CAUSAL_TOP_LEFT;
    Launch l;
    report("bhsd-f16", a.plan(m, l));
    printLaunchHeader("bhsd-f16", l);
  }
  {
    // The most rows i32 offsets address: T = 2^31 - 1; a block table row
    // shared by every sequence (stride 0 over B) is a valid read.
    VarlenArgs a(false, 1, INT32_MAX, 16);
    planCase(m, "rows-2^31-1", a);
    a = VarlenArgs(/*paged=*/true);
    a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    a.blockTable.strides[0] = 0;
    planCase(m, "block-table-broadcast", a);
  }

  // The lookup: attn_forward never takes a packed kernel, and
  // attn_forward_varlen only a packed one, of its keys' kind.
  {
    ForwardArgs f;
    Launch l;
    report("plain-call", f.plan(m, l));
    std::printf("plain-call: %s\n", l.kernel->name.c_str());
    Manifest onlyPacked;
    parseManifest("attn-manifest 1\ntarget sm_90a\nptx k.ptx\n"
                  "kernel fwd_varlen kind=forward dtype=bf16 head_dim=128 "
                  "value_dim=128 causal=none q=packed kv=packed block_q=128 "
                  "block_kv=64 threads=128 smem=0\n",
                  "m.manifest", onlyPacked);
    report("plain-call-packed-module", f.plan(onlyPacked.sections.front(), l));
    VarlenArgs a;
    report("packed-call", a.plan(onlyPacked.sections.front(), l));
    std::printf("packed-call: %s\n", l.kernel->name.c_str());
    a = VarlenArgs(/*paged=*/true);
    report("paged-call-packed-module", a.plan(onlyPacked.sections.front(), l));
    a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    report("paged-call", a.plan(m, l));
    std::printf("paged-call: %s\n", l.kernel->name.c_str());
  }
  planCase(plain.sections.front(), "no-packed-kernels", VarlenArgs());
  VarlenArgs a(/*paged=*/true);
  planCase(m, "no-kernel-paged-none", a);
  planCases<VarlenArgs>(
      m, {
             {"no-kernel-top-left",
              [&](VarlenArgs &a) { a.options.causal = ATTN_CAUSAL_TOP_LEFT; }},
             {"dtype-no-kernel",
              [&](VarlenArgs &a) {
                for (attn_tensor *t : {&a.q, &a.k, &a.v, &a.o})
                  t->dtype = ATTN_F32;
              }},
         });

  // Every argument error, in the order of the checks.
  {
    VarlenArgs b;
    ForwardTensors t = b.tensors();
    t.kvLens = &b.kvLens;
    t.blockTable = &b.blockTable;
    Launch l;
    report("keys-both", planForwardVarlen(m, t, 0, nullptr, l));
    t.blockTable = nullptr;
    report("keys-both-lens", planForwardVarlen(m, t, 0, nullptr, l));
    t.kvLens = nullptr;
    t.keyOffsets = nullptr;
    report("keys-none", planForwardVarlen(m, t, 0, nullptr, l));
    const char *names[] = {"q",       "k",          "v", "o", "query_offsets",
                           "kv_lens", "block_table"};
    for (const char *which : names) {
      bool paged = std::strcmp(which, "kv_lens") == 0 ||
                   std::strcmp(which, "block_table") == 0;
      VarlenArgs c(paged);
      ForwardTensors u = c.tensors();
      const attn_tensor **slot =
          std::strcmp(which, "q") == 0               ? &u.q
          : std::strcmp(which, "k") == 0             ? &u.k
          : std::strcmp(which, "v") == 0             ? &u.v
          : std::strcmp(which, "o") == 0             ? &u.o
          : std::strcmp(which, "query_offsets") == 0 ? &u.queryOffsets
          : std::strcmp(which, "kv_lens") == 0       ? &u.kvLens
                                                     : &u.blockTable;
      *slot = nullptr;
      std::string name = std::string("null-") + which;
      report(name.c_str(), planForwardVarlen(m, u, 0, nullptr, l));
    }
  }
  planCases<VarlenArgs>(
      m,
      {
          {"null-q-data", [&](VarlenArgs &a) { a.q.data = nullptr; }},
          {"null-query-offsets-data",
           [&](VarlenArgs &a) { a.queryOffsets.data = nullptr; }},
          {"null-key-offsets-data",
           [&](VarlenArgs &a) { a.keyOffsets.data = nullptr; }},
          {"rank-q", [&](VarlenArgs &a) { a.q.rank = 3; }},
          {"rank-lse", [&](VarlenArgs &a) { a.lse.rank = 2; }},
          {"rank-query-offsets",
           [&](VarlenArgs &a) { a.queryOffsets.rank = 2; }},
          {"rank-key-offsets", [&](VarlenArgs &a) { a.keyOffsets.rank = 0; }},
          {"rank-block-table",
           [&](VarlenArgs &a) {
             a = VarlenArgs(/*paged=*/true);
             a.blockTable.rank = 1;
           }},
          {"dtype-query-offsets",
           [&](VarlenArgs &a) { a.queryOffsets.dtype = ATTN_BF16; }},
          {"dtype-key-offsets",
           [&](VarlenArgs &a) { a.keyOffsets.dtype = ATTN_F32; }},
          {"dtype-query-offsets-enum",
           [&](VarlenArgs &a) {
             a.queryOffsets.dtype = static_cast<attn_dtype>(9);
           }},
          {"dtype-kv-lens",
           [&](VarlenArgs &a) {
             a = VarlenArgs(/*paged=*/true);
             a.kvLens.dtype = ATTN_BOOL;
           }},
      });
  tensorDtypeCases<VarlenArgs>(m);
  planCases<VarlenArgs>(
      m,
      {
          // A packed batch is one row of the batch dim: q, o, lse and packed k
          // and v have size 1 there; a pool's first dim counts pages.
          {"shape-q-batch",
           [&](VarlenArgs &a) { a.q = bshd(ATTN_BF16, 2, 32, 500, 128, kQ); }},
          {"shape-k-batch",
           [&](VarlenArgs &a) { a.k = bshd(ATTN_BF16, 4, 8, 750, 128, kK); }},
          {"shape-v-batch",
           [&](VarlenArgs &a) { a.v = bshd(ATTN_BF16, 4, 8, 750, 128, kV); }},
          {"shape-tk",
           [&](VarlenArgs &a) { a.v = bshd(ATTN_BF16, 1, 8, 2999, 128, kV); }},
          {"shape-pools",
           [&](VarlenArgs &a) {
             a = VarlenArgs(/*paged=*/true);
             a.v = bshd(ATTN_BF16, 1000, 8, 32, 128, kV);
           }},
          {"shape-head-dim",
           [&](VarlenArgs &a) { a.k = bshd(ATTN_BF16, 1, 8, 3000, 64, kK); }},
          {"shape-gqa",
           [&](VarlenArgs &a) {
             a.k = bshd(ATTN_BF16, 1, 5, 3000, 128, kK);
             a.v = bshd(ATTN_BF16, 1, 5, 3000, 128, kV);
           }},
          {"shape-o",
           [&](VarlenArgs &a) { a.o = bshd(ATTN_BF16, 1, 32, 999, 128, kO); }},
          {"shape-o-batch",
           [&](VarlenArgs &a) { a.o = bshd(ATTN_BF16, 4, 32, 250, 128, kO); }},
          {"shape-lse",
           [&](VarlenArgs &a) { a.lse = lseOf(4, 32, 250, kLse); }},
          {"shape-query-offsets-0",
           [&](VarlenArgs &a) {
             a.queryOffsets = offsetsOf(0, kQueryOffsets);
           }},
          {"shape-no-sequence",
           [&](VarlenArgs &a) {
             a.queryOffsets = offsetsOf(1, kQueryOffsets);
             a.keyOffsets = offsetsOf(1, kKeyOffsets);
           }},
          {"shape-key-offsets",
           [&](VarlenArgs &a) { a.keyOffsets = offsetsOf(4, kKeyOffsets); }},
          {"shape-kv-lens",
           [&](VarlenArgs &a) {
             a = VarlenArgs(/*paged=*/true);
             a.kvLens = kvLensOf(5);
           }},
          {"shape-block-table",
           [&](VarlenArgs &a) {
             a = VarlenArgs(/*paged=*/true);
             a.blockTable = blockTableOf(3, 256);
           }},
          {"capacity-2^31",
           [&](VarlenArgs &a) {
             a = VarlenArgs(/*paged=*/true);
             a.blockTable = blockTableOf(4, int64_t(1) << 31);
           }},
          // i32 offsets address at most 2^31 - 1 rows of q and of packed k and
          // v.
          {"rows-2^31",
           [&](VarlenArgs &a) { a = VarlenArgs(false, 4, int64_t(1) << 31); }},
          {"key-rows-2^31",
           [&](VarlenArgs &a) {
             a = VarlenArgs(false, 4, 1000, int64_t(1) << 31);
           }},
          // 65536 sequences: past grid z's limit.
          {"grid-limit", [&](VarlenArgs &a) { a = VarlenArgs(false, 65536); }},
          {"stride-q-last", [&](VarlenArgs &a) { a.q.strides[3] = 2; }},
          {"stride-o-zero", [&](VarlenArgs &a) { a.o.strides[2] = 0; }},
          {"stride-query-offsets",
           [&](VarlenArgs &a) { a.queryOffsets.strides[0] = 2; }},
          {"align-q", [&](VarlenArgs &a) { misalignPointer(a.q, kQ, 8); }},
          {"align-k-rows",
           [&](VarlenArgs &a) {
             a.k.strides[0] =
                 3000 * 8 * 132; // [T, H, D] with rows of 132 elements
             a.k.strides[1] = 132;
             a.k.strides[2] = 8 * 132;
           }},
          {"align-query-offsets",
           [&](VarlenArgs &a) {
             misalignPointer(a.queryOffsets, kQueryOffsets, 2);
           }},
          {"align-key-offsets",
           [&](VarlenArgs &a) {
             misalignPointer(a.keyOffsets, kKeyOffsets, 1);
           }},
          {"align-lse",
           [&](VarlenArgs &a) {
             a.lse.data = reinterpret_cast<void *>(kLse + 2);
           }},
      });
  optionCases<VarlenArgs>(m);
  {
    VarlenArgs b;
    attn_tensor mask = maskOf(ATTN_BF16, 1, 32, 1000, 3000);
    b.options.mask = &mask;
    planCase(m, "mask", b);
  }
  report("null-module", VarlenArgs().call(nullptr, nullptr));
  return 0;
}

//===----------------------------------------------------------------------===//
// Backward plans
//===----------------------------------------------------------------------===//

constexpr uint64_t kDout = 0x800000, kDq = 0x900000, kDk = 0xa00000,
                   kDv = 0xb00000;

/// kModule plus backward kernels (each kind with tiles of its own): all
/// three kinds for bf16 d128 causal none and bottom_right, and none with
/// mask=add; top_left without backward_kv; mask=bool with backward_dot
/// only.
std::string backwardModule() {
  std::string text = kModule;
  const struct {
    const char *suffix, *keys;
    bool dot, kv, q;
  } specs[] = {
      {"none", "causal=none", true, true, true},
      {"br", "causal=bottom_right", true, true, true},
      {"none_add", "causal=none mask=add", true, true, true},
      {"tl", "causal=top_left", true, false, true},
      {"none_bool", "causal=none mask=bool", true, false, false},
  };
  for (const auto &spec : specs) {
    std::string common =
        std::string(" dtype=bf16 head_dim=128 value_dim=128 ") + spec.keys;
    if (spec.dot)
      text += std::string("kernel bwd_dot_bf16_128_") + spec.suffix +
              " kind=backward_dot" + common +
              " block_q=64 block_kv=64 threads=128 smem=0\n";
    if (spec.kv)
      text += std::string("kernel bwd_kv_bf16_128_") + spec.suffix +
              " kind=backward_kv" + common +
              " block_q=64 block_kv=128 threads=256 smem=98304\n";
    if (spec.q)
      text += std::string("kernel bwd_q_bf16_128_") + spec.suffix +
              " kind=backward_q" + common +
              " block_q=128 block_kv=64 threads=256 smem=81920\n";
  }
  return text;
}

struct BackwardArgs {
  using Plan = BackwardPlan;
  attn_tensor q, k, v, o, dout, lse, dq, dk, dv;
  attn_options options = {0.0f, ATTN_CAUSAL_NONE, -1, nullptr, 0};
  bool withLse = true;
  uint64_t workspace = kWorkspace;
  int64_t workspaceBytes = int64_t(1) << 20;

  /// B=2, Hq=8, Hkv=2, Sq=77, Sk=1000, D=Dv=`d`, `dtype`, BHSD or BSHD.
  explicit BackwardArgs(attn_dtype dtype = ATTN_BF16, int64_t d = 128,
                        bool bshdLayout = false) {
    auto make = bshdLayout ? bshd : bhsd;
    q = make(dtype, 2, 8, 77, d, kQ);
    k = make(dtype, 2, 2, 1000, d, kK);
    v = make(dtype, 2, 2, 1000, d, kV);
    o = make(dtype, 2, 8, 77, d, kO);
    dout = make(dtype, 2, 8, 77, d, kDout);
    lse = lseOf(2, 8, 77, kLse);
    dq = make(dtype, 2, 8, 77, d, kDq);
    dk = make(dtype, 2, 2, 1000, d, kDk);
    dv = make(dtype, 2, 2, 1000, d, kDv);
  }
  BackwardTensors tensors() const {
    return {&q, &k, &v, &o, &dout, withLse ? &lse : nullptr, &dq, &dk, &dv};
  }
  attn_status plan(const ManifestSection &m, BackwardPlan &p) const {
    return planBackward(m, tensors(), &options,
                        reinterpret_cast<void *>(workspace), workspaceBytes, p);
  }
  /// The same call through the C API.
  attn_status call(attn_module *module, void *stream) const {
    return attn_backward(
        module, &q, &k, &v, &o, &dout, withLse ? &lse : nullptr, &dq, &dk, &dv,
        &options, reinterpret_cast<void *>(workspace), workspaceBytes, stream);
  }
};

/// Gives `a` 2 x 4096 x `rows` query rows (q, o, dout, dq and lse; B = 2,
/// Hq = 4096, D = 128 bf16), for the workspace limits.
void setQueryRows(BackwardArgs &a, int64_t rows) {
  for (attn_tensor *t : {&a.q, &a.o, &a.dout, &a.dq})
    *t = bhsd(ATTN_BF16, 2, 4096, rows, 128,
              reinterpret_cast<uint64_t>(t->data));
  a.lse = lseOf(2, 4096, rows, kLse);
}

/// Bf16 D = 128 backward arguments of MQA with one query row and one key:
/// B = 1, Hq = 4, Hkv = 1, one CTA per kernel.
BackwardArgs mqaOneRowArgs() {
  BackwardArgs a;
  a.q = bhsd(ATTN_BF16, 1, 4, 1, 128, kQ);
  a.o = bhsd(ATTN_BF16, 1, 4, 1, 128, kO);
  a.dout = bhsd(ATTN_BF16, 1, 4, 1, 128, kDout);
  a.dq = bhsd(ATTN_BF16, 1, 4, 1, 128, kDq);
  a.lse = lseOf(1, 4, 1, kLse);
  a.k = bhsd(ATTN_BF16, 1, 1, 1, 128, kK);
  a.v = bhsd(ATTN_BF16, 1, 1, 1, 128, kV);
  a.dk = bhsd(ATTN_BF16, 1, 1, 1, 128, kDk);
  a.dv = bhsd(ATTN_BF16, 1, 1, 1, 128, kDv);
  return a;
}

/// Bf16 backward arguments of head dim `d` whose workspace is
/// attn_backward_atomic_workspace_size's, what every dQ mode needs.
BackwardArgs sizedBackwardArgs(int64_t d, bool bshdLayout = false) {
  BackwardArgs a(ATTN_BF16, d, bshdLayout);
  a.workspaceBytes = attn_backward_atomic_workspace_size(&a.q);
  return a;
}

/// The three launches' headers, then the words of the first, which the
/// other two must repeat.
void printBackward(const char *name, const BackwardPlan &p) {
  std::printf("%s: workspace=%lld%s\n", name,
              static_cast<long long>(p.workspaceBytes), p.dot.kernel->dqKey());
  for (const Launch *l : {&p.dot, &p.keyValue, &p.query})
    printLaunchHeader(name, *l);
  const std::vector<uint64_t> &args = p.dot.args;
  size_t at = 0;
  for (const char *t : {"q", "k", "v", "o", "dout"})
    at = printMemref(t, args, at, 4);
  at = printMemref("lse", args, at, 3);
  for (const char *t : {"dq", "dk", "dv"})
    at = printMemref(t, args, at, 4);
  at = printMemref("row_stats", args, at, 4);
  if (p.dq != DqMode::Recompute)
    at = printMemref("dq_accum", args, at, 4);
  if (p.dq == DqMode::Ordered)
    at = printMemref("dq_turns", args, at, 3);
  if (p.dot.kernel->mask != MaskKind::None)
    at = printMemref("mask", args, at, 4);
  if (p.dot.kernel->hasBlockMask())
    at = printBlockMask(args, at, /*backward=*/true);
  std::printf("  scale_log2=%.6f window=%lld\n", f32Word(args[at]),
              static_cast<long long>(args[at + 1]));
  bool same = p.keyValue.args == args && p.query.args == args &&
              p.dot.tensorMaps.empty() && p.keyValue.tensorMaps.empty() &&
              p.query.tensorMaps.empty();
  std::printf("  backward_kv and backward_q words: %s\n",
              same ? "the same" : "DIFFERENT");
}

void backwardCase(const ManifestSection &m, const char *name,
                  const BackwardArgs &a, bool print = false) {
  BackwardPlan p;
  attn_status s = a.plan(m, p);
  report(name, s);
  if (s == ATTN_OK && print)
    printBackward(name, p);
}

int runBackward() {
  Manifest parsed, plain;
  if (!setUp(backwardModule(), parsed) || !setUp(kModule, plain))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  // B=2 Hq=8 Hkv=2 Sq=77 Sk=1000 D=128 bf16 (BackwardArgs).
  backwardCase(m, "bhsd", BackwardArgs(), true);
  {
    BackwardArgs a(ATTN_BF16, 128, /*bshdLayout=*/true);
    a.options = {0.5f, ATTN_CAUSAL_BOTTOM_RIGHT, 256, nullptr};
    backwardCase(m, "bshd", a, true);
  }
  {
    // Past D = 256 the dK/dV and dQ kernels take a CTA per tile and column
    // block (value_blocks): grid x = ceil(Sk / 32) x 4 and ceil(Sq / 32) x 2.
    Manifest wide;
    std::string common = " dtype=bf16 head_dim=512 value_dim=512 causal=none ";
    if (!setUp(std::string(kModule) +
                   "kernel bwd_dot_bf16_512 kind=backward_dot" + common +
                   "block_q=64 block_kv=64 threads=128 smem=0\n"
                   "kernel bwd_kv_bf16_512 kind=backward_kv" + common +
                   "block_q=32 block_kv=32 value_blocks=4 threads=64 "
                   "smem=201728\n"
                   "kernel bwd_q_bf16_512 kind=backward_q" + common +
                   "block_q=32 block_kv=32 value_blocks=2 threads=64 "
                   "smem=199680\n",
               wide))
      return 1;
    BackwardArgs a = sizedBackwardArgs(512);
    BackwardPlan p;
    backwardCase(wide.sections.front(), "d512-blocks", a);
    if (a.plan(wide.sections.front(), p) == ATTN_OK)
      for (const Launch *l : {&p.dot, &p.keyValue, &p.query})
        printLaunchHeader("d512-blocks", *l);
  }
  {
    // MQA, one query row, one key: one CTA per kernel.
    BackwardArgs a = mqaOneRowArgs();
    a.workspaceBytes = 64;
    backwardCase(m, "mqa-one-row", a);
    BackwardPlan p;
    if (a.plan(m, p) == ATTN_OK)
      for (const Launch *l : {&p.dot, &p.keyValue, &p.query})
        printLaunchHeader("mqa-one-row", *l);
  }
  {
    // An additive [Sq, Sk] mask as PyTorch expands it: after row_stats.
    BackwardArgs a;
    attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    mask.strides[0] = mask.strides[1] = 0;
    a.options.mask = &mask;
    backwardCase(m, "mask-add", a, true);
  }
  {
    // Inputs may be broadcast (stride 0): o and dout shared by the batch.
    BackwardArgs a;
    a.o.strides[0] = a.dout.strides[0] = 0;
    a.lse.strides[0] = 0;
    backwardCase(m, "inputs-broadcast", a);
  }

  // The workspace: a 16-byte record per query row, f32 [B, Hq, Sq, 4].
  {
    BackwardArgs a;
    std::printf("workspace-size: %lld\n",
                static_cast<long long>(attn_backward_workspace_size(&a.q)));
    a.q = bshd(ATTN_F16, 3, 5, 7, 64, kQ);
    std::printf("workspace-size 3x5x7: %lld\n",
                static_cast<long long>(attn_backward_workspace_size(&a.q)));
    int64_t bytes = attn_backward_workspace_size(nullptr);
    std::printf("workspace-size null: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    a.q.rank = 3;
    bytes = attn_backward_workspace_size(&a.q);
    std::printf("workspace-size rank: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    a = BackwardArgs();
    a.q.shape[2] = int64_t(1) << 46;
    bytes = attn_backward_workspace_size(&a.q);
    std::printf("workspace-size huge: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    // 2 x 8 x 2^42 records are 2^50 bytes, the most the runtime plans; one
    // more row is past it, and 2^59 rows overflow int64 (2^63 bytes).
    a.q.shape[2] = int64_t(1) << 42;
    std::printf("workspace-size 2^50: %lld\n",
                static_cast<long long>(attn_backward_workspace_size(&a.q)));
    a.q.shape[2] += 1;
    bytes = attn_backward_workspace_size(&a.q);
    std::printf("workspace-size 2^50+16: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    a.q.shape[0] = a.q.shape[1] = 1;
    a.q.shape[2] = int64_t(1) << 59;
    bytes = attn_backward_workspace_size(&a.q);
    std::printf("workspace-size overflow: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
  }
  BackwardArgs a;
  a.workspace = 0;
  backwardCase(m, "workspace-null", a);
  a = BackwardArgs();
  a.workspace = kWorkspace + 128;
  backwardCase(m, "workspace-align", a);
  a = BackwardArgs();
  a.workspaceBytes = 2 * 8 * 77 * 16 - 1;
  backwardCase(m, "workspace-small", a);
  a.workspaceBytes += 1;
  backwardCase(m, "workspace-exact", a);
  // 2 x 4096 x 2^36 query rows: the tensors and grids fit, their row
  // statistics (2^53 bytes) are past the runtime's 2^50.
  planCases<BackwardArgs>(
      m,
      {
          {"workspace-rows",
           [&](BackwardArgs &a) {
             setQueryRows(a, int64_t(1) << 36);
           }},
          // Kernels: all three of one specialisation, or what is missing.
          {"no-kernel-kv",
           [&](BackwardArgs &a) { a.options.causal = ATTN_CAUSAL_TOP_LEFT; }},
      });
  {
    BackwardArgs b;
    attn_tensor mask = maskOf(ATTN_BOOL, 2, 1, 1, 1000);
    b.options.mask = &mask;
    backwardCase(m, "no-kernel-bool", b);
  }
  backwardCase(m, "no-kernel-d64", BackwardArgs(ATTN_BF16, 64));
  backwardCase(m, "dtype-no-kernel", BackwardArgs(ATTN_F16, 128));
  backwardCase(plain.sections.front(), "no-backward-kernels", BackwardArgs());
  a = BackwardArgs();
  for (attn_tensor *t : {&a.q, &a.k, &a.v, &a.o, &a.dout, &a.dq, &a.dk, &a.dv})
    t->shape[0] = 70000;
  a.lse.shape[0] = 70000;
  backwardCase(m, "grid-limit", a);

  // Null pointers.
  a = BackwardArgs();
  {
    BackwardPlan p;
    BackwardTensors t = a.tensors();
    t.dout = nullptr;
    report("null-dout",
           planBackward(m, t, nullptr, reinterpret_cast<void *>(kWorkspace),
                        1 << 20, p));
    t = a.tensors();
    t.dk = nullptr;
    report("null-dk",
           planBackward(m, t, nullptr, reinterpret_cast<void *>(kWorkspace),
                        1 << 20, p));
  }
  a.withLse = false;
  backwardCase(m, "null-lse", a);
  a = BackwardArgs();
  a.dv.data = nullptr;
  backwardCase(m, "null-data", a);
  report("null-module", BackwardArgs().call(nullptr, nullptr));
  {
    BackwardPlan p;
    report("null-options",
           planBackward(m, BackwardArgs().tensors(), nullptr,
                        reinterpret_cast<void *>(kWorkspace), 1 << 20, p));
  }

  // Ranks, dtypes, shapes: each tensor named.
  planCases<BackwardArgs>(
      m,
      {
          {"rank-dout", [&](BackwardArgs &a) { a.dout.rank = 3; }},
          {"rank-lse", [&](BackwardArgs &a) { a.lse.rank = 4; }},
          {"dtype-dout", [&](BackwardArgs &a) { a.dout.dtype = ATTN_F16; }},
          {"dtype-dq", [&](BackwardArgs &a) { a.dq.dtype = ATTN_F32; }},
          {"dtype-dv-bool", [&](BackwardArgs &a) { a.dv.dtype = ATTN_BOOL; }},
          {"dtype-lse", [&](BackwardArgs &a) { a.lse.dtype = ATTN_BF16; }},
          {"dtype-mixed", [&](BackwardArgs &a) { a.v.dtype = ATTN_F16; }},
          {"shape-o", [&](BackwardArgs &a) { a.o.shape[3] = 64; }},
          {"shape-dout", [&](BackwardArgs &a) { a.dout.shape[2] = 78; }},
          {"shape-lse", [&](BackwardArgs &a) { a.lse.shape[1] = 2; }},
          {"shape-dq", [&](BackwardArgs &a) { a.dq.shape[3] = 64; }},
          {"shape-dk",
           [&](BackwardArgs &a) {
             a.dk.shape[1] = 8; // the query heads: dk has k's
           }},
          {"shape-dv", [&](BackwardArgs &a) { a.dv.shape[2] = 999; }},
          {"shape-gqa",
           [&](BackwardArgs &a) {
             for (attn_tensor *t : {&a.q, &a.o, &a.dout, &a.dq})
               t->shape[1] = 7;
             a.lse.shape[1] = 7;
           }},
          // Strides, extents, alignment.
          {"stride-dout-last", [&](BackwardArgs &a) { a.dout.strides[3] = 2; }},
          {"stride-dk-negative",
           [&](BackwardArgs &a) { a.dk.strides[2] = -128; }},
          {"stride-dq-zero", [&](BackwardArgs &a) { a.dq.strides[1] = 0; }},
          {"extent-dv", [&](BackwardArgs &a) { a.dv.strides[0] = INT64_MAX; }},
          {"align-dout",
           [&](BackwardArgs &a) { misalignPointer(a.dout, kDout, 2); }},
          {"align-dk-rows",
           [&](BackwardArgs &a) { misalignRowStride(a.dk, 1000, 2); }},
          {"align-lse",
           [&](BackwardArgs &a) {
             a.lse.data = reinterpret_cast<void *>(kLse + 2);
           }},
      });
  // Options and the mask, as for the forward.
  optionCases<BackwardArgs>(m);
  {
    BackwardArgs b;
    attn_tensor mask = maskOf(ATTN_BF16, 2, 8, 77, 999);
    b.options.mask = &mask;
    backwardCase(m, "mask-shape", b);
    mask = maskOf(ATTN_F16, 1, 1, 77, 1000);
    backwardCase(m, "mask-dtype", b);
  }
  return 0;
}

/// Manifest lines of bf16 backward kernels of dQ mode `dq` (atomic or
/// ordered), head dims `headDim`, manifest keys `keys`, named
/// bwd_KIND_bf16_SUFFIX_DQdq: the deterministic ones' tiles but
/// backward_q's smem=0; the kinds `dot`, `kv` and `q` say.
std::string accumulatingKernels(const std::string &dq,
                                const std::string &suffix, int headDim,
                                const char *keys, bool dot, bool kv, bool q) {
  std::string dims = std::to_string(headDim);
  std::string common = " dtype=bf16 head_dim=" + dims + " value_dim=" + dims +
                       " " + keys + " dq=" + dq;
  std::string name = "_bf16_" + suffix + "_" + dq + "dq";
  std::string text;
  if (dot)
    text += "kernel bwd_dot" + name + " kind=backward_dot" + common +
            " block_q=64 block_kv=64 threads=128 smem=0\n";
  if (kv)
    text += "kernel bwd_kv" + name + " kind=backward_kv" + common +
            " block_q=64 block_kv=128 threads=256 smem=98304\n";
  if (q)
    text += "kernel bwd_q" + name + " kind=backward_q" + common +
            " block_q=128 block_kv=64 threads=256 smem=0\n";
  return text;
}

/// backwardModule() plus dq=atomic backward kernels (bf16 d128, the
/// deterministic ones' tiles but backward_q's smem=0): all three for
/// causal none (which has the deterministic set too) and for mask=bool
/// (whose deterministic set has backward_dot only); backward_dot and
/// backward_kv alone for mask=add (whose deterministic set is whole);
/// backward_dot alone for top_left (whose deterministic set lacks
/// backward_kv).
std::string atomicModule() {
  std::string text = backwardModule();
  const struct {
    const char *suffix, *keys;
    bool dot, kv, q;
  } specs[] = {
      {"none", "causal=none", true, true, true},
      {"none_bool", "causal=none mask=bool", true, true, true},
      {"none_add", "causal=none mask=add", true, true, false},
      {"tl", "causal=top_left", true, false, false},
  };
  for (const auto &spec : specs)
    text += accumulatingKernels("atomic", std::string("128_") + spec.suffix,
                                128, spec.keys, spec.dot, spec.kv, spec.q);
  return text;
}

/// The atomic dQ mode's plans (options->atomic_dq): which set serves a
/// call, the dq_accum parameter over the workspace, the workspace sizes
/// and the errors.
int runBackwardAtomic() {
  Manifest parsed, deterministic;
  if (!setUp(atomicModule(), parsed) || !setUp(backwardModule(), deterministic))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  // B=2 Hq=8 Hkv=2 Sq=77 Sk=1000 D=128 bf16 (BackwardArgs).
  BackwardArgs a;
  a.options.atomic_dq = 1;
  backwardCase(m, "atomic", a, true);
  backwardCase(m, "atomic-zero", BackwardArgs(), true);
  {
    BackwardPlan p;
    report("atomic-null-options",
           planBackward(m, BackwardArgs().tensors(), nullptr,
                        reinterpret_cast<void *>(kWorkspace), 1 << 20, p));
    std::printf("atomic-null-options: %s\n", p.dot.kernel->name.c_str());
  }
  // Any nonzero value asks for them.
  a.options.atomic_dq = -7;
  backwardCase(m, "atomic-negative", a);
  {
    BackwardPlan p;
    if (a.plan(m, p) == ATTN_OK)
      std::printf("atomic-negative: %s\n", p.dot.kernel->name.c_str());
  }
  // A module without dq=atomic kernels: the deterministic ones serve.
  a.options.atomic_dq = 1;
  backwardCase(deterministic.sections.front(), "atomic-none-in-module", a,
               true);
  {
    // One query row per head: the accumulator after the 64 bytes of
    // records, at the next 256-byte boundary, then the turns (unused by
    // the atomic kernels, but one layout serves both accumulating modes).
    BackwardArgs b = mqaOneRowArgs();
    b.options.atomic_dq = 1;
    b.workspaceBytes = 256 + 4 * 128 * 4 + 4 * 4;
    backwardCase(m, "atomic-one-row", b, true);
    b.workspaceBytes -= 1;
    backwardCase(m, "atomic-one-row-small", b);
  }
  {
    // mask=bool: the deterministic set lacks backward_kv and backward_q.
    BackwardArgs b;
    attn_tensor mask = maskOf(ATTN_BOOL, 2, 1, 1, 1000);
    b.options.mask = &mask;
    b.options.atomic_dq = 1;
    backwardCase(m, "atomic-bool", b, true);
    b.options.atomic_dq = 0;
    backwardCase(m, "atomic-bool-zero", b);
    // mask=add: the dq=atomic set lacks backward_q; never a mix.
    mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    b.options.atomic_dq = 1;
    BackwardPlan p;
    report("atomic-add-partial", b.plan(m, p));
    std::printf("atomic-add-partial: %s %s %s\n", p.dot.kernel->name.c_str(),
                p.keyValue.kernel->name.c_str(), p.query.kernel->name.c_str());
  }
  // Neither set whole: top_left (deterministic without backward_kv,
  // dq=atomic with backward_dot alone), d64 (no backward kernels).
  a = BackwardArgs();
  a.options.atomic_dq = 1;
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  backwardCase(m, "atomic-top-left", a);
  a.options.atomic_dq = 0;
  backwardCase(m, "atomic-top-left-zero", a);
  planCases<BackwardArgs>(m, {
                                 {"atomic-d64",
                                  [&](BackwardArgs &a) {
                                    a = BackwardArgs(ATTN_BF16, 64);
                                    a.options.atomic_dq = 1;
                                  }},
                                 {"atomic-dtype",
                                  [&](BackwardArgs &a) {
                                    a = BackwardArgs(ATTN_F16, 128);
                                    a.options.atomic_dq = 1;
                                  }},
                             });

  // The workspace: records, then the accumulator at round_up(records, 256),
  // then the turns at round_up(accumulator end, 256): 2 x 8 x 77 rows are
  // 19712 bytes of records (77 x 256), 630784 of accumulator (D = 128) and
  // 4928 of turns.
  a = BackwardArgs();
  a.options.atomic_dq = 1;
  std::printf("atomic-workspace-size: %lld (deterministic %lld)\n",
              static_cast<long long>(attn_backward_atomic_workspace_size(&a.q)),
              static_cast<long long>(attn_backward_workspace_size(&a.q)));
  {
    BackwardArgs b;
    b.q = bshd(ATTN_F16, 3, 5, 7, 64, kQ);
    std::printf(
        "atomic-workspace-size 3x5x7 d64: %lld\n",
        static_cast<long long>(attn_backward_atomic_workspace_size(&b.q)));
    int64_t bytes = attn_backward_atomic_workspace_size(nullptr);
    std::printf("atomic-workspace-size null: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    b.q.rank = 3;
    bytes = attn_backward_atomic_workspace_size(&b.q);
    std::printf("atomic-workspace-size rank: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    b.q = bhsd(ATTN_BF16, 2, 8, 77, 128, kQ);
    b.q.shape[3] = 0;
    bytes = attn_backward_atomic_workspace_size(&b.q);
    std::printf("atomic-workspace-size d0: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    b.q.data = nullptr;
    b.q.shape[3] = 128;
    bytes = attn_backward_atomic_workspace_size(&b.q);
    std::printf("atomic-workspace-size no data: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    // 2^45 rows of D = 3: 2^49 bytes of records, 3 x 2^47 of accumulator
    // and 2^47 of turns, the 2^50 the runtime plans; one more row is past
    // it, and 2^59 rows or a head dim of 2^61 overflow int64.
    b.q = bhsd(ATTN_BF16, 1, 1, int64_t(1) << 45, 3, kQ);
    std::printf(
        "atomic-workspace-size 2^50: %lld\n",
        static_cast<long long>(attn_backward_atomic_workspace_size(&b.q)));
    b.q.shape[2] += 1;
    bytes = attn_backward_atomic_workspace_size(&b.q);
    std::printf("atomic-workspace-size 2^50+: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    b.q.shape[2] = int64_t(1) << 59;
    bytes = attn_backward_atomic_workspace_size(&b.q);
    std::printf("atomic-workspace-size overflow: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
    b.q.shape[2] = 8;
    b.q.shape[3] = int64_t(1) << 61;
    bytes = attn_backward_atomic_workspace_size(&b.q);
    std::printf("atomic-workspace-size head-dim overflow: %lld: %s\n",
                static_cast<long long>(bytes), attn_last_error());
  }
  // A workspace for the deterministic kernels is too small for the atomic
  // ones: an error, never the deterministic kernels instead.
  a.workspaceBytes = 19712;
  backwardCase(m, "atomic-workspace-deterministic-size", a);
  a.workspaceBytes = 655423;
  backwardCase(m, "atomic-workspace-small", a);
  a.workspaceBytes = 655424;
  backwardCase(m, "atomic-workspace-exact", a);
  a.workspace = 0;
  backwardCase(m, "atomic-workspace-null", a);
  a = BackwardArgs();
  a.options.atomic_dq = 1;
  a.workspace = kWorkspace + 16;
  backwardCase(m, "atomic-workspace-align", a);
  // 2 x 4096 x 2^29 query rows: their records (2^46 bytes) fit the
  // runtime's 2^50, with the accumulator (2^51 more) they do not.
  a = BackwardArgs();
  setQueryRows(a, int64_t(1) << 29);
  a.workspaceBytes = int64_t(1) << 50;
  backwardCase(m, "atomic-workspace-rows-deterministic", a);
  a.options.atomic_dq = 1;
  backwardCase(m, "atomic-workspace-rows", a);
  return 0;
}

/// atomicModule() plus dq=ordered backward kernels: all three for causal
/// none (which has the recompute and dq=atomic sets too), bottom_right
/// (recompute set, no dq=atomic) and d64 (no other kernels); backward_dot
/// alone for mask=bool (whose dq=atomic set is whole, its recompute set
/// not) and top_left; backward_dot and backward_kv for mask=add.
std::string orderedModule() {
  std::string text = atomicModule();
  const struct {
    const char *suffix, *keys;
    int headDim;
    bool dot, kv, q;
  } specs[] = {
      {"128_none", "causal=none", 128, true, true, true},
      {"128_br", "causal=bottom_right", 128, true, true, true},
      {"64_none", "causal=none", 64, true, true, true},
      {"128_none_bool", "causal=none mask=bool", 128, true, false, false},
      {"128_tl", "causal=top_left", 128, true, false, false},
      {"128_none_add", "causal=none mask=add", 128, true, true, false},
  };
  for (const auto &spec : specs)
    text += accumulatingKernels("ordered", spec.suffix, spec.headDim,
                                spec.keys, spec.dot, spec.kv, spec.q);
  return text;
}

/// The three kernels a plan chose and its dQ mode, or its error.
void backwardNames(const ManifestSection &m, const char *name,
                   const BackwardArgs &a) {
  BackwardPlan p;
  attn_status s = a.plan(m, p);
  report(name, s);
  if (s == ATTN_OK)
    std::printf("%s: dq=%s %s %s %s\n", name, dqModeName(p.dq),
                p.dot.kernel->name.c_str(), p.keyValue.kernel->name.c_str(),
                p.query.kernel->name.c_str());
}

/// The ordered dQ mode's plans: the deterministic calls' preferred set,
/// the atomic set when asked for and whole, the fallbacks, dq_turns over
/// the workspace after dq_accum, the workspace sizes and the errors.
int runBackwardOrdered() {
  Manifest parsed, recompute;
  if (!setUp(orderedModule(), parsed) || !setUp(backwardModule(), recompute))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  // B=2 Hq=8 Hkv=2 Sq=77 Sk=1000 D=128 bf16 (BackwardArgs).
  backwardCase(m, "ordered", BackwardArgs(), true);
  {
    BackwardPlan p;
    report("ordered-null-options",
           planBackward(m, BackwardArgs().tensors(), nullptr,
                        reinterpret_cast<void *>(kWorkspace), 1 << 20, p));
    std::printf("ordered-null-options: dq=%s %s\n", dqModeName(p.dq),
                p.dot.kernel->name.c_str());
  }
  BackwardArgs a;
  a.options.atomic_dq = 1;
  backwardNames(m, "ordered-atomic-asked", a);
  // bottom_right: no dq=atomic set, so atomic_dq falls back to the
  // deterministic choice, the ordered set over the recompute one.
  a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
  backwardNames(m, "ordered-br-atomic-asked", a);
  a.options.atomic_dq = 0;
  backwardNames(m, "ordered-br", a);
  // d64: the ordered set alone.
  a = BackwardArgs(ATTN_BF16, 64);
  backwardNames(m, "ordered-d64", a);
  a.options.atomic_dq = 1;
  backwardNames(m, "ordered-d64-atomic-asked", a);
  {
    // mask=add: the ordered set lacks backward_q, so the recompute set.
    BackwardArgs b;
    attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    b.options.mask = &mask;
    backwardNames(m, "ordered-add-partial", b);
    // mask=bool: the dq=atomic set is whole, the ordered one has
    // backward_dot alone and the recompute one too.
    mask = maskOf(ATTN_BOOL, 2, 1, 1, 1000);
    backwardNames(m, "ordered-bool", b);
    b.options.atomic_dq = 1;
    backwardNames(m, "ordered-bool-atomic-asked", b);
  }
  // top_left: no whole set (ordered: backward_dot; dq=atomic: backward_dot;
  // recompute: no backward_kv).
  a = BackwardArgs();
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  backwardCase(m, "ordered-top-left", a);
  a.options.atomic_dq = 1;
  backwardCase(m, "ordered-top-left-atomic-asked", a);
  {
    // One query row per head: 64 bytes of records, the accumulator at 256,
    // the turns at 256 + 4 x 128 x 4 = 2304, 2320 bytes in all.
    BackwardArgs b = mqaOneRowArgs();
    b.workspaceBytes = attn_backward_atomic_workspace_size(&b.q);
    std::printf("ordered-one-row-size: %lld\n",
                static_cast<long long>(b.workspaceBytes));
    backwardCase(m, "ordered-one-row", b, true);
    b.workspaceBytes -= 1;
    backwardCase(m, "ordered-one-row-small", b);
  }
  // The records alone, which the recompute kernels use: too small for the
  // ordered ones (an error, never the recompute kernels instead), enough
  // for a module without them.
  a = BackwardArgs();
  a.workspaceBytes = 2 * 8 * 77 * 16;
  backwardCase(m, "ordered-workspace-records", a);
  backwardNames(recompute.sections.front(),
                "ordered-workspace-records-recompute", a);
  a.workspaceBytes = attn_backward_atomic_workspace_size(&a.q) - 1;
  backwardCase(m, "ordered-workspace-small", a);
  a.workspaceBytes += 1;
  backwardCase(m, "ordered-workspace-exact", a);
  a.workspace = 0;
  backwardCase(m, "ordered-workspace-null", a);
  // 2 x 4096 x 2^29 query rows: records of 2^46 bytes, with accumulator
  // and turns past 2^50.
  a = BackwardArgs();
  setQueryRows(a, int64_t(1) << 29);
  a.workspaceBytes = int64_t(1) << 50;
  backwardCase(m, "ordered-workspace-rows", a);
  return 0;
}

//===----------------------------------------------------------------------===//
// Modifications (manifest mod=, mod_hash=; attn_options.mod)
//===----------------------------------------------------------------------===//

/// The text of the file at `path` ("" when it cannot be read).
std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}
bool setUpFileAndPlain(const std::string &manifest, Manifest &parsed,
                       Manifest &plain) {
  std::string text = readText(manifest);
  if (text.empty()) {
    std::printf("cannot read %s\n", manifest.c_str());
    return false;
  }
  return setUp(text, parsed) && setUp(kModule, plain);
}

/// The kernel a plan chose, or its error.
template <typename Args>
void modCase(const ManifestSection &m, const char *name, const Args &a) {
  typename Args::Plan plan;
  attn_status s = a.plan(m, plan);
  if (s != ATTN_OK) {
    report(name, s);
    return;
  }
  if constexpr (std::is_same_v<typename Args::Plan, Launch>) {
    std::printf("%s: kernel=%s\n", name, plan.kernel->name.c_str());
  } else if constexpr (std::is_same_v<typename Args::Plan, DecodePlan>) {
    std::printf("%s: kernels=%s %s splits=%lld\n", name,
                plan.partial.kernel->name.c_str(),
                plan.combine.kernel->name.c_str(),
                static_cast<long long>(plan.numSplits));
  } else {
    std::printf("%s: kernels=%s %s %s%s\n", name, plan.dot.kernel->name.c_str(),
                plan.keyValue.kernel->name.c_str(),
                plan.query.kernel->name.c_str(), plan.dot.kernel->dqKey());
  }
}

//===----------------------------------------------------------------------===//
// Backward plans with tensor maps (backward_kv and backward_q with `tma=`)
//===----------------------------------------------------------------------===//

/// Backward kernels as attn-compile writes the sm_90a ones, backward_kv and
/// backward_q copying their tiles by TMA (backward_dot never does): bf16
/// d128 with and without a mask, f16 d64 in the atomic dQ mode, bf16 d60
/// (rows of 120 bytes, whose boxes of 64 columns read past the head dim),
/// and a top_left set without tma=.
std::string backwardTmaModule() {
  const std::string kv = " tma=q:64x64:128,k:128x64:128,v:128x64:128,"
                         "dout:64x64:128,row_stats:64x4:0\n";
  const std::string q =
      " tma=q:128x64:128,k:64x64:128,v:64x64:128,dout:128x64:128\n";
  const std::string bf16 = " dtype=bf16 head_dim=128 value_dim=128";
  std::string text = "attn-manifest 1\ntarget sm_90a\nptx kernels.ptx\n";
  for (const char *mask : {"", " mask=add"}) {
    std::string suffix = *mask ? "_add" : "";
    text += "kernel bwd_dot" + suffix + " kind=backward_dot" + bf16 +
            " causal=none" + mask +
            " block_q=64 block_kv=64 threads=128 smem=0\n";
    text += "kernel bwd_kv_tma" + suffix + " kind=backward_kv" + bf16 +
            " causal=none" + mask +
            " block_q=64 block_kv=128 threads=256 smem=180224" + kv;
    text += "kernel bwd_q_tma" + suffix + " kind=backward_q" + bf16 +
            " causal=none" + mask +
            " block_q=128 block_kv=64 threads=256 smem=164864" + q;
  }
  const std::string f16 =
      " dtype=f16 head_dim=64 value_dim=64 causal=bottom_right dq=atomic";
  text += "kernel bwd_dot_f16 kind=backward_dot" + f16 +
          " block_q=64 block_kv=64 threads=128 smem=0\n"
          "kernel bwd_kv_tma_f16 kind=backward_kv" +
          f16 + " block_q=64 block_kv=128 threads=256 smem=98304" +
          " tma=q:64x64:128,k:128x64:128,v:128x64:128,dout:64x64:128,"
          "row_stats:64x4:0,dq_accum:64x32:128\n"
          "kernel bwd_q_f16 kind=backward_q" +
          f16 + " block_q=128 block_kv=64 threads=128 smem=0\n";
  const std::string d60 = " dtype=bf16 head_dim=60 value_dim=60 causal=none";
  text += "kernel bwd_dot_d60 kind=backward_dot" + d60 +
          " block_q=64 block_kv=64 threads=128 smem=0\n"
          "kernel bwd_kv_d60 kind=backward_kv" +
          d60 + " block_q=64 block_kv=128 threads=256 smem=180224" + kv +
          "kernel bwd_q_d60 kind=backward_q" + d60 +
          " block_q=128 block_kv=64 threads=256 smem=164864" + q;
  const std::string tl = " dtype=bf16 head_dim=128 value_dim=128 "
                         "causal=top_left block_q=64 block_kv=64 threads=128 "
                         "smem=0\n";
  text += "kernel bwd_dot_tl kind=backward_dot" + tl +
          "kernel bwd_kv_tl kind=backward_kv" + tl +
          "kernel bwd_q_tl kind=backward_q" + tl;
  return text;
}

/// Plans the backward call `a`; prints each launch's header and tensor
/// maps, and whether the launches share their words up to window (those of
/// backward_dot, which takes no maps) with each kernel's maps after them.
void backwardTmaCase(const ManifestSection &m, const char *name,
                     const BackwardArgs &a) {
  BackwardPlan p;
  attn_status s = a.plan(m, p);
  report(name, s);
  if (s != ATTN_OK)
    return;
  bool shared = p.dot.tensorMaps.empty();
  for (const Launch *l : {&p.dot, &p.keyValue, &p.query}) {
    printLaunchHeader(name, *l);
    printTensorMaps(*l);
    size_t words = p.dot.args.size();
    shared = shared && l->args.size() == words + l->tensorMaps.size() &&
             std::equal(p.dot.args.begin(), p.dot.args.end(), l->args.begin());
    for (size_t i = 0; i < l->tensorMaps.size(); ++i)
      shared = shared && l->tensorMaps[i].param == words + i;
  }
  std::printf("  words up to window: %s; maps after them: %zu, %zu, %zu\n",
              shared ? "shared" : "DIFFERENT", p.dot.tensorMaps.size(),
              p.keyValue.tensorMaps.size(), p.query.tensorMaps.size());
}

/// A BHSD tensor [b, h, s, d] whose rows are `rowStride` elements apart
/// (padded past d).
attn_tensor paddedOf(attn_dtype dtype, int64_t b, int64_t h, int64_t s,
                     int64_t d, int64_t rowStride, uint64_t data) {
  attn_tensor t = bhsd(dtype, b, h, s, d, data);
  t.strides[2] = rowStride;
  t.strides[1] = s * rowStride;
  t.strides[0] = h * s * rowStride;
  return t;
}

/// BackwardArgs of D = Dv = 60 bf16 whose tensors have rows padded to 64
/// elements (128 bytes), which TMA can read.
BackwardArgs paddedD60() {
  BackwardArgs a(ATTN_BF16, 60);
  const struct {
    attn_tensor *tensor;
    int64_t heads, seq;
    uint64_t data;
  } tensors[] = {{&a.q, 8, 77, kQ},       {&a.k, 2, 1000, kK},
                 {&a.v, 2, 1000, kV},     {&a.o, 8, 77, kO},
                 {&a.dout, 8, 77, kDout}, {&a.dq, 8, 77, kDq},
                 {&a.dk, 2, 1000, kDk},   {&a.dv, 2, 1000, kDv}};
  for (const auto &t : tensors)
    *t.tensor = paddedOf(ATTN_BF16, 2, t.heads, t.seq, 60, 64, t.data);
  return a;
}

int runBackwardTma() {
  Manifest parsed;
  if (!setUp(backwardTmaModule(), parsed))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  // B=2 Hq=8 Hkv=2 Sq=77 Sk=1000 D=128 bf16 (BackwardArgs).
  backwardTmaCase(m, "bhsd", BackwardArgs());
  backwardTmaCase(m, "bshd", BackwardArgs(ATTN_BF16, 128, /*bshdLayout=*/true));
  {
    // The mask's descriptor joins the shared words; the maps follow it.
    BackwardArgs a;
    attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    a.options.mask = &mask;
    backwardTmaCase(m, "mask", a);
  }
  {
    // B = 1: row_stats' map steps over no batch (stride 0), like q's.
    BackwardArgs a;
    for (attn_tensor *t :
         {&a.q, &a.k, &a.v, &a.o, &a.dout, &a.lse, &a.dq, &a.dk, &a.dv})
      t->shape[0] = 1;
    backwardTmaCase(m, "batch-one", a);
  }
  {
    // f16 in the atomic dQ mode: maps after dq_accum; row_stats' is f32
    // whatever the kernels' dtype. backward_q has no tma= here.
    BackwardArgs a(ATTN_F16, 64);
    a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    a.options.atomic_dq = 1;
    backwardTmaCase(m, "f16-atomic", a);
  }
  {
    // Kernels without tma=: the same words for all three, no maps.
    BackwardArgs a;
    a.options.causal = ATTN_CAUSAL_TOP_LEFT;
    backwardTmaCase(m, "no-tma", a);
  }
  // D = 60 with rows padded to 128 bytes: the maps have the logical head
  // dim and the padded strides.
  backwardTmaCase(m, "d60-padded", paddedD60());

  // Errors. dout's alignment is every kernel's check where its rows are
  // whole 16-byte chunks, TMA's own where they are not (D = 60 reads
  // element by element without maps).
  {
    BackwardArgs a;
    misalignPointer(a.dout, kDout, 8);
    backwardTmaCase(m, "dout-misaligned", a);
    a = paddedD60();
    misalignPointer(a.dout, kDout, 8);
    backwardTmaCase(m, "d60-dout-misaligned", a);
    a = paddedD60();
    a.dout = bhsd(ATTN_BF16, 2, 8, 77, 60, kDout);
    backwardTmaCase(m, "d60-dout-unpadded", a);
    a = BackwardArgs();
    a.dout.strides[0] = int64_t(1) << 39; // 2^40 bytes
    backwardTmaCase(m, "dout-stride-2^40", a);
    a = BackwardArgs();
    a.workspace = kWorkspace + 16;
    backwardTmaCase(m, "workspace-misaligned", a);
  }
  return 0;
}

/// The manifest keys mod= and mod_hash=, then the kernels each call takes
/// for its options->mod out of `manifest` (Inputs/mod.manifest).
int runMod(const std::string &manifest) {
  const std::string h = kHeader;
  const std::string fwd = kFwd;
  const std::string hash = " mod_hash=a5ef8a6600d098f0";
  const std::string softcap = fwd.substr(0, 8) + "_softcap" + fwd.substr(8) +
                              " mod=softcap" + hash + "\n";
  const std::string combine = "kernel c kind=decode_combine dtype=bf16 "
                              "value_dim=128 rows=4 threads=128 smem=0";
  {
    // A kernel without a modification and one with (the same
    // specialisation otherwise), and a 64-character name.
    Manifest m;
    report("mod-valid",
           parseManifest(h + fwd + "\n" + softcap + fwd.substr(0, 8) + "_long" +
                             fwd.substr(8) + " mod=" + std::string(64, 'x') +
                             " mod_hash=0123456789012345\n",
                         "m.manifest", m));
    for (const KernelSpec &k : m.sections.front().kernels)
      std::printf("  %s: mod='%s' mod_hash='%s'\n", k.name.c_str(),
                  k.mod.c_str(), k.modHash.c_str());
    std::printf("  forward: %s\n",
                m.sections.front().describe(KernelKind::Forward).c_str());
  }
  parseCase("mod-missing-hash", h + fwd + " mod=softcap\n");
  parseCase("mod-hash-without-mod", h + fwd + hash + "\n");
  parseCase("mod-empty", h + fwd + " mod=" + hash + "\n");
  parseCase("mod-bad-chars", h + fwd + " mod=soft-cap" + hash + "\n");
  parseCase("mod-too-long",
            h + fwd + " mod=" + std::string(65, 'x') + hash + "\n");
  parseCase("mod-hash-short", h + fwd + " mod=softcap mod_hash=a5ef\n");
  parseCase("mod-hash-long",
            h + fwd + " mod=softcap mod_hash=a5ef8a6600d098f00\n");
  parseCase("mod-hash-upper",
            h + fwd + " mod=softcap mod_hash=A5EF8A6600D098F0\n");
  parseCase("mod-hash-not-hex",
            h + fwd + " mod=softcap mod_hash=a5ef8a6600d098fg\n");
  parseCase("mod-twice", h + fwd + " mod=softcap mod=relu" + hash + "\n");
  parseCase("mod-combine",
            h + fwd + "\n" + combine + " mod=softcap" + hash + "\n");
  // One name, two hashes, in one section: on kernels of other
  // specialisations (top_left) and of other kinds alike.
  const std::string topLeft = "kernel k_tl kind=forward dtype=bf16 "
                              "head_dim=128 value_dim=128 causal=top_left "
                              "block_q=128 block_kv=64 threads=256 smem=0 "
                              "mod=softcap";
  parseCase("mod-hash-collision",
            h + softcap + topLeft + " mod_hash=0000000000000000\n");
  parseCase("mod-hash-collision-kinds",
            h + softcap +
                "kernel d kind=decode_partial dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none rows=16 block_kv=64 threads=128 "
                "smem=0 mod=softcap mod_hash=0000000000000000\n");
  parseCase("mod-same-hash", h + softcap + topLeft + hash + "\n");
  // Across sections a name may stand for another modification: each
  // section is a module of its own.
  parseCase("mod-hash-other-section",
            h + softcap + "target sm_80\nptx k80.ptx\n" + fwd +
                " mod=softcap mod_hash=0000000000000000\n");
  // The same specialisation and modification twice.
  parseCase("mod-duplicate-config",
            h + softcap +
                "kernel k2 kind=forward dtype=bf16 head_dim=128 "
                "value_dim=128 causal=none block_q=64 block_kv=32 "
                "threads=128 smem=0 mod=softcap" +
                hash + "\n");

  Manifest parsed, plain;
  if (!setUpFileAndPlain(manifest, parsed, plain))
    return 1;
  const ManifestSection &m = parsed.sections.front();
  std::printf("modifications: %zu\n", m.modNames().size());

  // attn_forward: fwd for no modification (NULL or ""), fwd_softcap for
  // "softcap"; a bottom_right call only with the unnamed modification.
  ForwardArgs f;
  modCase(m, "forward", f);
  f.options.mod = "";
  modCase(m, "forward-empty", f);
  f.options.mod = "softcap";
  modCase(m, "forward-softcap", f);
  f.options.mod = "relu2";
  modCase(m, "forward-unknown", f);
  modCase(plain.sections.front(), "forward-unknown-no-mods", f);
  f.options.mod = "h0123456789012345";
  f.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
  modCase(m, "forward-br-hash", f);
  f.options.mod = nullptr;
  modCase(m, "forward-br-plain", f);
  f.options.mod = "softcap";
  modCase(m, "forward-br-softcap", f);
  {
    ForwardArgs a;
    attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    a.options.mask = &mask;
    a.options.mod = "softcap";
    modCase(m, "forward-softcap-mask", a);
  }
  // Names that no manifest can have.
  const std::string longName(65, 'x');
  const std::string maxName(64, 'x');
  planCases<ForwardArgs>(
      m, {
             {"mod-name-chars",
              [](ForwardArgs &a) { a.options.mod = "soft-cap"; }},
             {"mod-name-control",
              [](ForwardArgs &a) { a.options.mod = "soft\ncap\x7f"; }},
             {"mod-name-long",
              [&](ForwardArgs &a) { a.options.mod = longName.c_str(); }},
             {"mod-name-64",
              [&](ForwardArgs &a) { a.options.mod = maxName.c_str(); }},
         });

  // attn_decode and attn_decode_splits: the partial kernel of the
  // modification, the shared combine kernel.
  DecodeArgs d;
  modCase(m, "decode", d);
  d.options.mod = "softcap";
  modCase(m, "decode-softcap", d);
  {
    int64_t plainSplits = 0, modSplits = 0;
    report("splits", d.resolve(m, nullptr, 0, plainSplits));
    report("splits-softcap", d.resolve(m, &d.options, 0, modSplits));
    std::printf("splits: %lld, softcap: %lld\n",
                static_cast<long long>(plainSplits),
                static_cast<long long>(modSplits));
  }
  d.options.mod = "relu2";
  modCase(m, "decode-unknown", d);
  {
    int64_t n = 0;
    report("splits-unknown", d.resolve(m, &d.options, 0, n));
  }
  // attn_decode_paged: the module's paged kernel has a modification only.
  PagedArgs pg;
  modCase(m, "paged", pg);
  pg.options.mod = "softcap";
  modCase(m, "paged-softcap", pg);
  // attn_forward_varlen likewise.
  VarlenArgs vl;
  modCase(m, "varlen", vl);
  vl.options.mod = "softcap";
  modCase(m, "varlen-softcap", vl);
  // attn_backward: each set of three, never a mix; the atomic dQ mode
  // (which the module does not have) falls back to the modification's
  // deterministic set.
  BackwardArgs b;
  modCase(m, "backward", b);
  b.options.mod = "softcap";
  modCase(m, "backward-softcap", b);
  b.options.atomic_dq = 1;
  modCase(m, "backward-softcap-atomic", b);
  b.options.atomic_dq = 0;
  b.options.causal = ATTN_CAUSAL_TOP_LEFT;
  modCase(m, "backward-softcap-top-left", b);
  b = BackwardArgs();
  b.options.mod = "h0123456789012345";
  modCase(m, "backward-unknown", b);
  return 0;
}

//===----------------------------------------------------------------------===//
// Mod operands (manifest mod_operands=; attn_options.mod_operands)
//===----------------------------------------------------------------------===//

constexpr uint64_t kDocIds = 0x1800000, kBias = 0x1900000, kScalar = 0x1a00000;

/// The tensors docmask reads (Inputs/mod-operands.manifest,
/// mod_operands=i64:1,f32:2): an i64 document id per key [1000], and an
/// f32 bias [8, 1] whose dim of size 1 has a stride (5) that the kernels
/// get as 0.
struct DocmaskOperands {
  attn_tensor operands[2] = {
      {reinterpret_cast<void *>(kDocIds), ATTN_I64, 1, {1000}, {1}},
      {reinterpret_cast<void *>(kBias), ATTN_F32, 2, {8, 1}, {1, 5}}};

  /// Makes `options` a call of mod=docmask with these tensors.
  void use(attn_options &options) {
    options.mod = "docmask";
    options.mod_operands = operands;
    options.num_mod_operands = 2;
  }
};

/// scale's one tensor (mod_operands=f32:0): an f32 scalar.
attn_tensor scalarOf() {
  attn_tensor t = {reinterpret_cast<void *>(kScalar), ATTN_F32, 0, {}, {}};
  return t;
}

/// The launch's header, where its tensor maps are, then the descriptors of
/// its mod operands, which end its words.
void printModOperands(const char *name, const Launch &l) {
  printLaunchHeader(name, l);
  size_t words = 0;
  for (const ModOperand &operand : l.kernel->modOperands)
    words += 3 + 2 * static_cast<size_t>(operand.rank);
  for (const TensorMapArg &m : l.tensorMaps)
    std::printf("  %s_tmap: param %zu\n", m.tensor, m.param);
  size_t at = l.args.size() - words;
  for (size_t i = 0; i < l.kernel->modOperands.size(); ++i) {
    std::string operand =
        "mod" + std::to_string(i) + " (param " + std::to_string(at) + ")";
    at =
        printMemref(operand.c_str(), l.args, at, l.kernel->modOperands[i].rank);
  }
}

/// planCase for each case on default arguments of a docmask call
/// (DocmaskOperands), changed as the case says.
template <typename Args>
void modOperandCases(
    const ManifestSection &m,
    std::initializer_list<
        std::pair<const char *, std::function<void(Args &, attn_tensor *)>>>
        cases) {
  for (const auto &[name, change] : cases) {
    Args a;
    DocmaskOperands d;
    d.use(a.options);
    change(a, d.operands);
    planCase(m, name, a);
  }
}

/// The manifest key mod_operands=, then the checks of
/// attn_options.mod_operands and the words every kind's launch gets for
/// them out of `manifest` (Inputs/mod-operands.manifest).
int runModOperands(const std::string &manifest) {
  const std::string h = kHeader;
  const std::string fwd = kFwd;
  const std::string mod = " mod=docmask mod_hash=0123456789abcdef";
  const std::string dec = "kernel d kind=decode_partial dtype=bf16 "
                          "head_dim=128 value_dim=128 causal=none rows=16 "
                          "block_kv=64 threads=128 smem=0";
  const std::string combine = "kernel c kind=decode_combine dtype=bf16 "
                              "value_dim=128 rows=4 threads=128 smem=0";
  const std::string tma = " tma=q:128x64:128,k:128x64:128,v:128x64:128";
  const std::string params =
      " params=q:memref4,k:memref4,v:memref4,o:memref4,lse:memref3,"
      "scale_log2:f32,window:i64";
  const std::string tmaps = ",q_tmap:tmap4,k_tmap:tmap4,v_tmap:tmap4";
  {
    // Every dtype and rank; the parameters they add.
    Manifest m;
    report("operands-valid",
           parseManifest(h + fwd + mod +
                             " mod_operands=i64:1,f32:2,bool:0,i32:4,f16:3,"
                             "bf16:2\n",
                         "m.manifest", m));
    const KernelSpec &k = m.sections.front().kernels.front();
    std::printf("  mod_operands=%s: %s\n", k.modOperandList().c_str(),
                k.modOperandSignature().c_str());
    std::printf("  params=%s\n", abiParamList(k).c_str());
    std::printf("  %zu parameters, %s\n", abiParamSizes(k).size(),
                abiName(k).c_str());
  }
  parseCase("operands-params", h + fwd + mod + " mod_operands=i64:1,f32:2" +
                                   params + ",mod0:memref1,mod1:memref2\n");
  parseCase("operands-params-tma", h + fwd + mod + " mod_operands=i64:1" + tma +
                                       params + tmaps + ",mod0:memref1\n");
  parseCase("operands-params-missing",
            h + fwd + mod + " mod_operands=i64:1" + params + "\n");
  parseCase("operands-params-before-tmaps",
            h + fwd + mod + " mod_operands=i64:1" + tma + params +
                ",mod0:memref1" + tmaps + "\n");
  parseCase("operands-params-rank",
            h + fwd + mod + " mod_operands=i64:1" + params + ",mod0:memref2\n");
  parseCase("operands-bad-dtype", h + fwd + mod + " mod_operands=u8:1\n");
  parseCase("operands-bad-rank", h + fwd + mod + " mod_operands=i64:5\n");
  parseCase("operands-negative-rank", h + fwd + mod + " mod_operands=i64:-1\n");
  parseCase("operands-no-rank", h + fwd + mod + " mod_operands=i64\n");
  parseCase("operands-empty", h + fwd + mod + " mod_operands=\n");
  parseCase("operands-empty-entry",
            h + fwd + mod + " mod_operands=i64:1,,f32:2\n");
  std::string sixteen = "f32:0";
  for (int i = 1; i < 16; ++i)
    sixteen += ",f32:" + std::to_string(i % 5);
  {
    Manifest m;
    report("operands-16",
           parseManifest(h + fwd + mod + " mod_operands=" + sixteen + "\n",
                         "m.manifest", m));
    const KernelSpec &k = m.sections.front().kernels.front();
    std::printf("  %zu operands, %zu parameters, the last %s:%s%d\n",
                k.modOperands.size(), abiParams(k).size(),
                abiParams(k).back().name, abiParams(k).back().type,
                abiParams(k).back().rank);
  }
  parseCase("operands-17",
            h + fwd + mod + " mod_operands=" + sixteen + ",i32:1\n");
  parseCase("operands-without-mod", h + fwd + " mod_operands=i64:1\n");
  parseCase("operands-combine",
            h + fwd + "\n" + combine + " mod_operands=i64:1\n");
  parseCase("operands-twice",
            h + fwd + mod + " mod_operands=i64:1 mod_operands=i64:1\n");
  // One modification, two lists in a section: of other dtypes, ranks or
  // counts, or none; the same list on kernels of other kinds, or another
  // list in another section, is fine.
  parseCase("operands-differ", h + fwd + mod + " mod_operands=i64:1\n" + dec +
                                   mod + " mod_operands=i64:1,f32:2\n");
  parseCase("operands-differ-dtype", h + fwd + mod + " mod_operands=i64:1\n" +
                                         dec + mod + " mod_operands=i32:1\n");
  parseCase("operands-differ-rank", h + fwd + mod + " mod_operands=i64:1\n" +
                                        dec + mod + " mod_operands=i64:2\n");
  parseCase("operands-differ-none",
            h + fwd + mod + " mod_operands=i64:1\n" + dec + mod + "\n");
  parseCase("operands-same", h + fwd + mod + " mod_operands=i64:1,f32:2\n" +
                                 dec + mod + " mod_operands=i64:1,f32:2\n");
  parseCase("operands-other-section",
            h + fwd + mod + " mod_operands=i64:1\ntarget sm_80\nptx k80.ptx\n" +
                fwd + mod + " mod_operands=f32:2\n");

  Manifest parsed, plain;
  if (!setUpFileAndPlain(manifest, parsed, plain))
    return 1;
  const ManifestSection &m = parsed.sections.front();

  // attn_forward: the words of docmask's tensors after the tensor maps;
  // scale's rank-0 tensor (3 words).
  {
    ForwardArgs a;
    DocmaskOperands d;
    d.use(a.options);
    Launch l;
    attn_status s = a.plan(m, l);
    report("forward", s);
    if (s == ATTN_OK)
      printModOperands("forward", l);
    ForwardArgs b;
    attn_tensor scalar = scalarOf();
    b.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    b.options.mod = "scale";
    b.options.mod_operands = &scalar;
    b.options.num_mod_operands = 1;
    s = b.plan(m, l);
    report("forward-scale", s);
    if (s == ATTN_OK)
      printModOperands("forward-scale", l);
  }
  // The checks, in the order they come: the count and the array with the
  // other options, then, once the kernel is chosen, the count it reads and
  // each tensor against its manifest entry.
  modOperandCases<ForwardArgs>(
      m,
      {
          {"count-negative",
           [](ForwardArgs &a, attn_tensor *) {
             a.options.num_mod_operands = -1;
           }},
          {"count-17", [](ForwardArgs &a,
                          attn_tensor *) { a.options.num_mod_operands = 17; }},
          {"array-null",
           [](ForwardArgs &a, attn_tensor *) {
             a.options.mod_operands = nullptr;
           }},
          {"without-mod",
           [](ForwardArgs &a, attn_tensor *) { a.options.mod = nullptr; }},
          {"array-without-count",
           [](ForwardArgs &a, attn_tensor *) {
             a.options.mod = nullptr;
             a.options.num_mod_operands = 0;
           }},
          {"count-0", [](ForwardArgs &a,
                         attn_tensor *) { a.options.num_mod_operands = 0; }},
          {"count-1", [](ForwardArgs &a,
                         attn_tensor *) { a.options.num_mod_operands = 1; }},
          {"reads-none",
           [](ForwardArgs &a, attn_tensor *) {
             a.options.mod = "softcap";
             a.options.causal = ATTN_CAUSAL_TOP_LEFT;
             a.options.num_mod_operands = 1;
           }},
          {"dtype-enum",
           [](ForwardArgs &, attn_tensor *t) {
             t[1].dtype = static_cast<attn_dtype>(9);
           }},
          {"dtype",
           [](ForwardArgs &, attn_tensor *t) { t[0].dtype = ATTN_I32; }},
          {"dtype-of-q",
           [](ForwardArgs &, attn_tensor *t) { t[1].dtype = ATTN_BF16; }},
          {"rank", [](ForwardArgs &, attn_tensor *t) { t[1].rank = 1; }},
          {"rank-5", [](ForwardArgs &, attn_tensor *t) { t[1].rank = 5; }},
          {"rank-negative",
           [](ForwardArgs &, attn_tensor *t) { t[0].rank = -1; }},
          {"size-0", [](ForwardArgs &, attn_tensor *t) { t[1].shape[0] = 0; }},
          {"size-2^31",
           [](ForwardArgs &, attn_tensor *t) {
             t[0].shape[0] = int64_t(1) << 31;
           }},
          {"stride-negative",
           [](ForwardArgs &, attn_tensor *t) { t[0].strides[0] = -1; }},
          {"stride-negative-size-1",
           [](ForwardArgs &, attn_tensor *t) { t[1].strides[1] = -5; }},
          {"data-null",
           [](ForwardArgs &, attn_tensor *t) { t[0].data = nullptr; }},
          {"misaligned",
           [](ForwardArgs &, attn_tensor *t) {
             t[0].data = reinterpret_cast<void *>(kDocIds + 4);
           }},
          {"misaligned-f32",
           [](ForwardArgs &, attn_tensor *t) {
             t[1].data = reinterpret_cast<void *>(kBias + 2);
           }},
          {"extent",
           [](ForwardArgs &, attn_tensor *t) {
             t[0].shape[0] = 3;
             t[0].strides[0] = INT64_MAX / 4;
           }},
      });

  // attn_decode: the partial kernel's words end with them, the combine
  // kernel's never (44); attn_decode_splits checks them as attn_decode.
  {
    DecodeArgs a;
    DocmaskOperands d;
    d.use(a.options);
    DecodePlan p;
    attn_status s = a.plan(m, p);
    report("decode", s);
    if (s == ATTN_OK) {
      printModOperands("decode", p.partial);
      printLaunchHeader("decode", p.combine);
    }
    int64_t n = 0;
    report("splits", a.resolve(m, &a.options, 0, n));
    a.options.num_mod_operands = 0;
    report("splits-count-0", a.resolve(m, &a.options, 0, n));
    a.options.num_mod_operands = 17;
    report("splits-count-17", a.resolve(m, &a.options, 0, n));
    a.options.num_mod_operands = 2;
    d.operands[1].rank = 3;
    report("decode-rank", a.plan(m, p));
  }
  {
    PagedArgs a;
    DocmaskOperands d;
    d.use(a.options);
    DecodePlan p;
    attn_status s = a.plan(m, p);
    report("paged", s);
    if (s == ATTN_OK)
      printModOperands("paged", p.partial);
    int64_t n = 0;
    d.operands[0].dtype = ATTN_I32;
    report("paged-splits-dtype", a.resolve(m, 0, n));
  }
  {
    VarlenArgs a;
    DocmaskOperands d;
    d.use(a.options);
    Launch l;
    attn_status s = a.plan(m, l);
    report("varlen", s);
    if (s == ATTN_OK)
      printModOperands("varlen", l);
    d.operands[0].data = nullptr;
    report("varlen-data-null", a.plan(m, l));
  }
  // attn_backward: all three kernels get the same words.
  {
    BackwardArgs a;
    DocmaskOperands d;
    d.use(a.options);
    BackwardPlan p;
    attn_status s = a.plan(m, p);
    report("backward", s);
    if (s == ATTN_OK) {
      printModOperands("backward", p.dot);
      printLaunchHeader("backward", p.keyValue);
      printLaunchHeader("backward", p.query);
      std::printf("  backward_kv and backward_q words: %s\n",
                  p.keyValue.args == p.dot.args && p.query.args == p.dot.args
                      ? "the same"
                      : "DIFFERENT");
    }
    d.operands[1].shape[1] = 0;
    report("backward-size-0", a.plan(m, p));
    a.options.num_mod_operands = 3;
    report("backward-count-3", a.plan(m, p));
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Block masks (manifest blocks=; attn_options.block_mask)
//===----------------------------------------------------------------------===//

constexpr uint64_t kKvCounts = 0x1000000, kKvIndices = 0x1100000,
                   kFullKvCounts = 0x1200000, kFullKvIndices = 0x1300000,
                   kQCounts = 0x1400000, kQIndices = 0x1500000,
                   kFullQCounts = 0x1600000, kFullQIndices = 0x1700000;

/// One list of a block mask, i32 and contiguous: counts [b, h, blocks]
/// (`length` 0) or indices [b, h, blocks, length].
attn_tensor blockListOf(int64_t b, int64_t h, int64_t blocks, int64_t length,
                        uint64_t data) {
  attn_tensor t = {reinterpret_cast<void *>(data),
                   ATTN_I32,
                   4,
                   {b, h, blocks, length},
                   {h * blocks * length, blocks * length, length, 1}};
  if (length == 0)
    t = {reinterpret_cast<void *>(data),
         ATTN_I32,
         3,
         {b, h, blocks, 0},
         {h * blocks, blocks, 1, 0}};
  return t;
}

/// A block mask of `bq` x `bk` blocks for B=2 Hq=8 Sq=77 Sk=1000
/// (ForwardArgs, BackwardArgs): QB = ceil(77 / bq) query blocks and
/// KB = ceil(1000 / bk) key blocks, each list of the full B and Hq; the
/// index lists can name every block (N = KB, M = QB), the full ones fewer
/// (N2 = 3, M2 = 1).
attn_block_mask blockMaskOf(int64_t bq = 64, int64_t bk = 128) {
  int64_t qb = (77 + bq - 1) / bq, kb = (1000 + bk - 1) / bk;
  attn_block_mask m;
  m.block_q = bq;
  m.block_k = bk;
  m.kv_counts = blockListOf(2, 8, qb, 0, kKvCounts);
  m.kv_indices = blockListOf(2, 8, qb, kb, kKvIndices);
  m.full_kv_counts = blockListOf(2, 8, qb, 0, kFullKvCounts);
  m.full_kv_indices = blockListOf(2, 8, qb, 3, kFullKvIndices);
  m.q_counts = blockListOf(2, 8, kb, 0, kQCounts);
  m.q_indices = blockListOf(2, 8, kb, qb, kQIndices);
  m.full_q_counts = blockListOf(2, 8, kb, 0, kFullQCounts);
  m.full_q_indices = blockListOf(2, 8, kb, 1, kFullQIndices);
  return m;
}

/// One case of the block mask's checks: its name, and what it changes in a
/// valid block mask.
using BlockMaskCase =
    std::pair<const char *, std::function<void(attn_block_mask &)>>;

/// planCase for each case, in order, on default Args (ForwardArgs,
/// BackwardArgs) whose options->block_mask is `valid` changed as the case
/// says.
template <typename Args>
void blockMaskCases(const ManifestSection &m, const attn_block_mask &valid,
                    std::initializer_list<BlockMaskCase> cases) {
  for (const auto &[name, change] : cases) {
    attn_block_mask blockMask = valid;
    change(blockMask);
    Args a;
    a.options.block_mask = &blockMask;
    planCase(m, name, a);
  }
}

/// The checks of a block mask that attn_forward and attn_backward make, in
/// the order they come: the block sizes, then each list (here the kv_*
/// ones; the backward's q_* lists get the same checks): rank, dtype enum,
/// i32, shape (B and Hq the full size or 1, QB exact, the last dim >= 1),
/// data pointer, strides, extent, alignment. Broadcast lists and the
/// strides of their size-1 dims pass.
template <typename Args> void blockMaskListCases(const ManifestSection &m) {
  using B = attn_block_mask;
  blockMaskCases<Args>(
      m, blockMaskOf(),
      {
          {"block-q-zero", [](B &b) { b.block_q = 0; }},
          {"block-k-negative", [](B &b) { b.block_k = -128; }},
          {"kv-counts-rank", [](B &b) { b.kv_counts.rank = 4; }},
          {"kv-counts-dtype-enum",
           [](B &b) { b.kv_counts.dtype = static_cast<attn_dtype>(9); }},
          {"kv-counts-dtype", [](B &b) { b.kv_counts.dtype = ATTN_BF16; }},
          {"kv-counts-qb", [](B &b) { b.kv_counts.shape[2] = 1; }},
          {"kv-counts-b", [](B &b) { b.kv_counts.shape[0] = 3; }},
          {"kv-indices-rank", [](B &b) { b.kv_indices.rank = 3; }},
          {"kv-indices-hkv", [](B &b) { b.kv_indices.shape[1] = 2; }},
          {"kv-indices-empty", [](B &b) { b.kv_indices.shape[3] = 0; }},
          {"kv-indices-null-data", [](B &b) { b.kv_indices.data = nullptr; }},
          {"kv-indices-stride-negative",
           [](B &b) { b.kv_indices.strides[2] = -8; }},
          {"kv-indices-extent",
           [](B &b) { b.kv_indices.strides[0] = INT64_MAX; }},
          {"kv-indices-align",
           [](B &b) {
             b.kv_indices.data = reinterpret_cast<void *>(kKvIndices + 2);
           }},
          {"full-kv-counts-null-data",
           [](B &b) { b.full_kv_counts.data = nullptr; }},
          {"full-kv-indices-dtype",
           [](B &b) { b.full_kv_indices.dtype = ATTN_F32; }},
          {"full-kv-indices-qb", [](B &b) { b.full_kv_indices.shape[2] = 3; }},
          {"kv-broadcast",
           [](B &b) {
             // [1, 1, QB] zero counts, [B, 1, QB, N] indices; the strides
             // of size-1 dims are never stepped over.
             b.full_kv_counts = blockListOf(1, 1, 2, 0, kFullKvCounts);
             b.full_kv_counts.strides[0] = -5;
             b.kv_indices = blockListOf(2, 1, 2, 8, kKvIndices);
             b.kv_indices.strides[1] = INT64_MAX;
           }},
      });
}

/// The manifest key blocks=, then the plans of calls with and without
/// options->block_mask on `manifest` (Inputs/blocks.manifest): the kernels
/// each takes, the lists' words, the errors.
int runBlocks(const std::string &manifest) {
  const std::string h = kHeader;
  const std::string fwd = kFwd;
  const std::string fwdParams =
      "q:memref4,k:memref4,v:memref4,o:memref4,lse:memref3";
  const std::string kvLists =
      ",kv_block_counts:memref3,kv_block_indices:memref4,"
      "full_kv_block_counts:memref3,full_kv_block_indices:memref4";
  const std::string qLists =
      ",q_block_counts:memref3,q_block_indices:memref4,"
      "full_q_block_counts:memref3,full_q_block_indices:memref4";
  const std::string scalars = ",scale_log2:f32,window:i64";
  const std::string bwd = "kernel b kind=backward_kv dtype=bf16 head_dim=64 "
                          "value_dim=64 causal=none block_q=64 block_kv=64 "
                          "threads=128 smem=0";
  const std::string bwdParams =
      "q:memref4,k:memref4,v:memref4,o:memref4,dout:memref4,lse:memref3,"
      "dq:memref4,dk:memref4,dv:memref4,row_stats:memref4";
  const std::string dec = "kernel d kind=decode_partial dtype=bf16 "
                          "head_dim=128 value_dim=128 causal=none rows=16 "
                          "block_kv=64 threads=128 smem=0";
  // `kernel` (kFwd, bwd) renamed with `suffix`.
  auto named = [](const std::string &kernel, const char *suffix) {
    return kernel.substr(0, 8) + suffix + kernel.substr(8);
  };
  {
    // Kernels with and without a block mask, of several block sizes, the
    // largest (65536), with a mask and in the atomic dQ mode: the lists
    // after the mask (and dq_accum), before the scalars.
    Manifest m;
    report("blocks-valid",
           parseManifest(
               h + fwd + "\n" + named(fwd, "_blocks128x128") +
                   " blocks=128x128 params=" + fwdParams + kvLists + scalars +
                   "\n" + named(fwd, "_blocks64x128") + " blocks=64x128\n" +
                   named(fwd, "_addmask_blocks128x128") +
                   " mask=add blocks=128x128 params=" + fwdParams +
                   ",mask:memref4" + kvLists + scalars + "\n" +
                   named(fwd, "_max") + " blocks=65536x1\n" + bwd +
                   " blocks=128x128 params=" + bwdParams + kvLists + qLists +
                   scalars + "\n" + named(bwd, "_boolmask_atomicdq") +
                   " mask=bool blocks=128x128 dq=atomic params=" + bwdParams +
                   ",dq_accum:memref4,mask:memref4" + kvLists + qLists +
                   scalars + "\n",
               "m.manifest", m));
    const ManifestSection &section = m.sections.front();
    for (const KernelSpec &k : section.kernels)
      std::printf("  line %d: %s (%s) params=%zu\n", k.line, k.name.c_str(),
                  abiName(k).c_str(), abiParamSizes(k).size());
    std::printf("blocks-valid: forward: %s\n",
                section.describe(KernelKind::Forward).c_str());
    std::printf("blocks-valid: block sizes: %zu\n",
                section.blockMaskSizes().size());
    const int64_t lookups[][2] = {{0, 0}, {128, 128}, {64, 128}, {128, 64}};
    for (const auto &l : lookups) {
      const KernelSpec *k =
          section.find(KernelKind::Forward, ATTN_BF16, 128, 128,
                       ATTN_CAUSAL_NONE, MaskKind::None, false, false, false,
                       DqMode::Recompute, {}, l[0], l[1]);
      std::printf("blocks-valid: find blocks=%lldx%lld: %s\n",
                  static_cast<long long>(l[0]), static_cast<long long>(l[1]),
                  k ? k->name.c_str() : "none");
    }
  }
  parseCase("blocks-one-size", h + fwd + " blocks=128\n");
  parseCase("blocks-empty", h + fwd + " blocks=\n");
  parseCase("blocks-q-zero", h + fwd + " blocks=0x128\n");
  parseCase("blocks-k-zero", h + fwd + " blocks=128x0\n");
  parseCase("blocks-too-large", h + fwd + " blocks=128x65537\n");
  parseCase("blocks-no-k", h + fwd + " blocks=128x\n");
  parseCase("blocks-not-int", h + fwd + " blocks=12ax128\n");
  parseCase("blocks-upper-x", h + fwd + " blocks=128X128\n");
  parseCase("blocks-negative", h + fwd + " blocks=-1x128\n");
  parseCase("blocks-three", h + fwd + " blocks=128x128x128\n");
  parseCase("blocks-twice", h + fwd + " blocks=128x128 blocks=64x64\n");
  parseCase("blocks-decode", h + dec + " blocks=128x128\n");
  parseCase("blocks-combine",
            h + "kernel c kind=decode_combine dtype=bf16 value_dim=128 "
                "rows=4 threads=128 smem=0 blocks=128x128\n");
  parseCase("blocks-packed", h + fwd + " q=packed kv=packed blocks=128x128\n");
  // The params the compiler writes against the ABI of the key.
  parseCase("params-blocks-without-lists",
            h + fwd + " blocks=128x128 params=" + fwdParams + scalars + "\n");
  parseCase("params-lists-without-blocks",
            h + fwd + " params=" + fwdParams + kvLists + scalars + "\n");
  parseCase("params-lists-before-mask",
            h + fwd + " mask=add blocks=128x128 params=" + fwdParams +
                kvLists + ",mask:memref4" + scalars + "\n");
  parseCase("params-backward-kv-lists-only",
            h + bwd + " blocks=128x128 params=" + bwdParams + kvLists +
                scalars + "\n");
  parseCase("blocks-duplicate-config",
            h + fwd + " blocks=128x128\n" + named(fwd, "2") +
                " blocks=128x128\n");

  Manifest parsed, plain;
  if (!setUpFileAndPlain(manifest, parsed, plain))
    return 1;
  const ManifestSection &m = parsed.sections.front();

  // attn_forward: the lists after lse (and after a mask), stride 0 over
  // the dims a list broadcasts; the kernel of the call's block sizes.
  attn_block_mask blocks = blockMaskOf();
  {
    ForwardArgs a;
    a.options.block_mask = &blocks;
    Launch l;
    report("forward", a.plan(m, l));
    printForward("forward", l);
    attn_block_mask broadcast = blocks;
    broadcast.full_kv_counts = blockListOf(1, 1, 2, 0, kFullKvCounts);
    broadcast.full_kv_indices = blockListOf(2, 1, 2, 1, kFullKvIndices);
    broadcast.kv_indices.strides[3] = 3; // any stride: read element-wise
    broadcast.q_counts = broadcast.q_indices = attn_tensor{}; // ignored
    a.options.block_mask = &broadcast;
    attn_tensor mask = maskOf(ATTN_BOOL, 2, 1, 1, 1000);
    a.options.mask = &mask;
    a.withLse = false;
    report("forward-bool-broadcast", a.plan(m, l));
    printForward("forward-bool-broadcast", l);
    a = ForwardArgs();
    a.options.block_mask = &blocks;
    a.options.causal = ATTN_CAUSAL_TOP_LEFT;
    report("forward-top-left-tma", a.plan(m, l));
    printLaunchHeader("forward-top-left-tma", l);
    std::printf("forward-top-left-tma: %zu tensor maps, the first "
                "parameter %zu\n",
                l.tensorMaps.size(),
                l.tensorMaps.empty() ? 0 : l.tensorMaps.front().param);
  }
  // The choice of kernel: its block sizes, or none without a block mask.
  ForwardArgs f;
  modCase(m, "forward-plain", f);
  f.options.block_mask = &blocks;
  modCase(m, "forward-64x128", f);
  attn_block_mask other = blockMaskOf(128, 128);
  f.options.block_mask = &other;
  modCase(m, "forward-128x128", f);
  f.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
  modCase(m, "forward-br-128x128", f);
  f.options.block_mask = nullptr;
  modCase(m, "forward-br-plain", f);
  f = ForwardArgs();
  f.options.block_mask = &blocks;
  f.options.mod = "softcap";
  modCase(m, "forward-64x128-softcap", f);
  f.options.mod = nullptr;
  modCase(plain.sections.front(), "forward-no-block-kernels", f);

  // The checks, in order; attn_forward reads no q_* list.
  blockMaskListCases<ForwardArgs>(m);
  blockMaskCases<ForwardArgs>(m, blocks,
                              {
                                  {"forward-q-lists-ignored",
                                   [](attn_block_mask &b) {
                                     b.q_counts = b.q_indices = attn_tensor{};
                                     b.full_q_counts = b.full_q_indices =
                                         attn_tensor{};
                                   }},
                              });
  {
    // KB = ceil(Sk / block_k) past what i32 indices number.
    ForwardArgs a;
    a.k = bhsd(ATTN_BF16, 2, 2, int64_t(1) << 31, 128, kK);
    a.v = bhsd(ATTN_BF16, 2, 2, int64_t(1) << 31, 128, kV);
    attn_block_mask fine = blocks;
    fine.block_k = 1;
    a.options.block_mask = &fine;
    planCase(m, "key-blocks-i32", a);
  }

  // attn_backward: all eight lists after row_stats, the same words for the
  // three kernels; the atomic dQ mode's set of the block sizes.
  {
    BackwardArgs b;
    b.options.block_mask = &blocks;
    backwardCase(m, "backward", b, true);
    b.options.atomic_dq = 1;
    b.workspaceBytes = attn_backward_atomic_workspace_size(&b.q);
    modCase(m, "backward-atomic", b);
    b.options.block_mask = &other;
    modCase(m, "backward-128x128", b);
    b.options.block_mask = nullptr;
    b.options.atomic_dq = 0;
    modCase(m, "backward-plain", b);
  }
  blockMaskListCases<BackwardArgs>(m);
  blockMaskCases<BackwardArgs>(
      m, blocks,
      {
          {"q-counts-kb", [](attn_block_mask &b) { b.q_counts.shape[2] = 2; }},
          {"q-indices-null-data",
           [](attn_block_mask &b) { b.q_indices.data = nullptr; }},
          {"q-indices-empty",
           [](attn_block_mask &b) { b.q_indices.shape[3] = 0; }},
          {"full-q-counts-rank",
           [](attn_block_mask &b) { b.full_q_counts.rank = 2; }},
          {"full-q-indices-dtype",
           [](attn_block_mask &b) { b.full_q_indices.dtype = ATTN_BF16; }},
          {"full-q-indices-align",
           [](attn_block_mask &b) {
             b.full_q_indices.data =
                 reinterpret_cast<void *>(kFullQIndices + 1);
           }},
      });

  // The calls whose kernels take no block mask refuse one.
  {
    DecodeArgs d;
    d.options.block_mask = &blocks;
    DecodePlan p;
    report("decode", d.plan(m, p));
    int64_t splits = 0;
    report("decode-splits", d.resolve(m, &d.options, 0, splits));
    PagedArgs pg;
    pg.options.block_mask = &blocks;
    report("decode-paged", pg.plan(m, p));
    report("decode-paged-splits", pg.resolve(m, 0, splits));
    VarlenArgs vl;
    vl.options.block_mask = &blocks;
    Launch l;
    report("forward-varlen", vl.plan(m, l));
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Module loading without a usable GPU
//===----------------------------------------------------------------------===//

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

void loadCase(const char *name, const std::string &path) {
  attn_module *module = reinterpret_cast<attn_module *>(0x1);
  attn_status s = attn_module_load(path.c_str(), &module);
  report(name, s);
  if (module) {
    std::printf("%s: module is not null after a failure\n", name);
    attn_module_destroy(module);
  }
}

int runLoad(const std::string &dir) {
  std::string manifest = std::string(kHeader) + kFwd + "\n";
  std::string ptx = ".version 8.4\n.target sm_90a\n.address_size 64\n"
                    ".visible .entry k(\n)\n{\n\tret;\n}\n";
  if (!writeFile(dir + "/no-ptx.manifest", manifest) ||
      !writeFile(dir + "/bad.manifest", "attn-manifest 1\nfoo\n") ||
      !writeFile(dir + "/ok.manifest", manifest) ||
      !writeFile(dir + "/kernels.ptx", ptx) ||
      !writeFile(dir + "/wrong.manifest",
                 std::string(kHeader) +
                     "kernel other kind=decode_combine dtype=bf16 "
                     "value_dim=128 rows=4 threads=128 smem=0\n")) {
    std::printf("cannot write to %s\n", dir.c_str());
    return 1;
  }
  {
    attn_module *module = nullptr;
    report("null-path", attn_module_load(nullptr, &module));
    report("null-out",
           attn_module_load((dir + "/ok.manifest").c_str(), nullptr));
  }
  loadCase("missing-manifest", dir + "/none.manifest");
  loadCase("bad-manifest", dir + "/bad.manifest");
  // no-ptx.manifest names kernels.ptx next to it: remove it for this case.
  std::string lone = dir + "/lone";
  ::mkdir(lone.c_str(), 0755);
  if (!writeFile(lone + "/no-ptx.manifest", manifest))
    return 1;
  loadCase("missing-ptx", lone + "/no-ptx.manifest");
  loadCase("missing-entry", dir + "/wrong.manifest");
  // Everything before the driver passes; then the driver, the device or the
  // current context is missing (this program never creates one).
  loadCase("no-context", dir + "/ok.manifest");
  attn_module_destroy(nullptr);
  std::printf("destroy-null: ok\n");
  std::printf("target-null: %s\n",
              attn_module_target(nullptr) ? "not null" : "null");
  return 0;
}

//===----------------------------------------------------------------------===//
// Loading and launching through a driver (FakeCuda.c in the tests)
//===----------------------------------------------------------------------===//

/// Loads `manifest` and reports the status; null when it did not load.
attn_module *loadReported(const std::string &manifest) {
  attn_module *module = nullptr;
  attn_status s = attn_module_load(manifest.c_str(), &module);
  report("load", s);
  return s == ATTN_OK ? module : nullptr;
}

int runLaunch(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  {
    ForwardArgs a;
    report("forward", a.call(module, stream));
    a.q = bshd(ATTN_BF16, 2, 8, 77, 128, kQ);
    a.o = bshd(ATTN_BF16, 2, 8, 77, 128, kO);
    a.options.scale = 0.5f;
    report("forward-bshd", attn_forward(module, &a.q, &a.k, &a.v, &a.o, nullptr,
                                        &a.options, nullptr));
    a.k.data = reinterpret_cast<void *>(kK + 8);
    report("forward-misaligned", attn_forward(module, &a.q, &a.k, &a.v, &a.o,
                                              nullptr, &a.options, nullptr));
    // Rows of 59 bf16 (118 bytes) are read element by element: 2-byte
    // pointers and strides pass the checks (the module has no d59 kernel),
    // an odd address does not.
    a.q = bhsd(ATTN_BF16, 2, 8, 77, 59, kQ + 2);
    a.k = bhsd(ATTN_BF16, 2, 2, 1000, 59, kK + 6);
    a.v = bhsd(ATTN_BF16, 2, 2, 1000, 59, kV + 10);
    a.o = bhsd(ATTN_BF16, 2, 8, 77, 59, kO + 14);
    report("forward-d59", attn_forward(module, &a.q, &a.k, &a.v, &a.o, nullptr,
                                       &a.options, nullptr));
    a.k.data = reinterpret_cast<void *>(kK + 7);
    report("forward-d59-misaligned",
           attn_forward(module, &a.q, &a.k, &a.v, &a.o, nullptr, &a.options,
                        nullptr));
  }
  {
    // fwd_add and fwd_bool take the mask after lse. An additive [Sq, Sk]
    // mask as PyTorch expands it (stride 0 over B and Hq), then a boolean
    // [B, 1, 1, Sk] one at an odd address.
    ForwardArgs a;
    attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    mask.strides[0] = mask.strides[1] = 0;
    a.options.mask = &mask;
    report("forward-add", a.call(module, stream));
    mask = maskOf(ATTN_BOOL, 2, 1, 1, 1000, kMask + 3);
    report("forward-bool", attn_forward(module, &a.q, &a.k, &a.v, &a.o, nullptr,
                                        &a.options, stream));
    mask = maskOf(ATTN_BOOL, 2, 1, 77, 999);
    report("forward-bool-shape", attn_forward(module, &a.q, &a.k, &a.v, &a.o,
                                              nullptr, &a.options, stream));
  }
  {
    DecodeArgs a(1, 8, 4096);
    int64_t splits = 0;
    report("splits",
           attn_decode_splits(module, &a.q, &a.k, &a.v, nullptr, 0, &splits));
    int64_t bytes = attn_decode_workspace_size(&a.q, &a.v, splits);
    std::printf("splits: %lld, workspace: %lld bytes\n",
                static_cast<long long>(splits), static_cast<long long>(bytes));
    report("decode",
           attn_decode(module, &a.q, &a.k, &a.v, &a.o, &a.lse, nullptr, 0,
                       reinterpret_cast<void *>(kWorkspace), bytes, stream));
    report("decode-small",
           attn_decode(module, &a.q, &a.k, &a.v, &a.o, &a.lse, nullptr, 0,
                       reinterpret_cast<void *>(kWorkspace), bytes - 1,
                       stream));
  }
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// Forward launches through kernels with tensor maps (Inputs/tma.manifest):
/// the driver encodes q, k, v's maps, then gets them by value.
int runLaunchTma(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  ForwardArgs a;
  report("forward", a.call(module, stream));
  a.q = bshd(ATTN_BF16, 2, 8, 77, 128, kQ);
  a.k = bshd(ATTN_BF16, 2, 2, 1000, 128, kK);
  a.v = bshd(ATTN_BF16, 2, 2, 1000, 128, kV);
  a.o = bshd(ATTN_BF16, 2, 8, 77, 128, kO);
  report("forward-bshd", attn_forward(module, &a.q, &a.k, &a.v, &a.o, nullptr,
                                      &a.options, stream));
  a = forwardOf(ATTN_F16, 64);
  a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
  report("forward-f16", attn_forward(module, &a.q, &a.k, &a.v, &a.o, nullptr,
                                     &a.options, stream));
  a = ForwardArgs();
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  report("forward-no-tma", attn_forward(module, &a.q, &a.k, &a.v, &a.o, nullptr,
                                        &a.options, stream));
  a = ForwardArgs();
  a.v.data = reinterpret_cast<void *>(kV + 4);
  report("forward-misaligned", attn_forward(module, &a.q, &a.k, &a.v, &a.o,
                                            nullptr, &a.options, stream));
  a = ForwardArgs();
  a.q.strides[2] = 132;
  a.q.strides[1] = 132 * 77;
  a.q.strides[0] = 132 * 77 * 8;
  report("forward-stride", attn_forward(module, &a.q, &a.k, &a.v, &a.o, nullptr,
                                        &a.options, stream));
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// Backward launches through Inputs/backward.manifest (bf16 d64): three
/// launches in order on the caller's stream, with the same words.
int runLaunchBackward(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  BackwardArgs a = sizedBackwardArgs(64);
  int64_t bytes = a.workspaceBytes;
  std::printf("workspace: %lld bytes\n", static_cast<long long>(bytes));
  report("backward", a.call(module, stream));
  {
    BackwardArgs b(ATTN_BF16, 64, /*bshdLayout=*/true);
    attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    mask.strides[0] = mask.strides[1] = 0;
    b.options.mask = &mask;
    b.options.scale = 0.5f;
    report("backward-bshd-add", b.call(module, stream));
  }
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  report("backward-top-left", a.call(module, stream));
  // The recompute kernels use the records alone, B * Hq * Sq * 16 bytes.
  a = BackwardArgs(ATTN_BF16, 64);
  a.workspaceBytes = 2 * 8 * 77 * 16 - 1;
  report("backward-small", a.call(module, stream));
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// Backward launches through Inputs/backward-tma.manifest (bf16 d128):
/// backward_dot without tensor maps, then backward_kv and backward_q with
/// theirs, encoded at launch (row_stats' over the workspace), after the
/// words the three share and before the mod operands; the calls whose
/// arguments TMA cannot read launch nothing.
int runLaunchBackwardTma(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  std::printf("workspace: %lld bytes\n",
              static_cast<long long>(sizedBackwardArgs(128).workspaceBytes));
  report("backward", sizedBackwardArgs(128).call(module, stream));
  report("backward-bshd",
         sizedBackwardArgs(128, /*bshdLayout=*/true).call(module, stream));
  BackwardArgs bias = sizedBackwardArgs(128);
  attn_tensor table = {
      reinterpret_cast<void *>(kBias), ATTN_F32, 1, {1000}, {1}};
  bias.options.mod = "bias";
  bias.options.mod_operands = &table;
  bias.options.num_mod_operands = 1;
  report("backward-bias", bias.call(module, stream));
  BackwardArgs dout = sizedBackwardArgs(128);
  misalignPointer(dout.dout, kDout, 8);
  report("backward-dout-misaligned", dout.call(module, stream));
  BackwardArgs workspace = sizedBackwardArgs(128);
  workspace.workspace = kWorkspace + 16;
  report("backward-workspace-misaligned", workspace.call(module, stream));
  BackwardArgs atomic = sizedBackwardArgs(128);
  atomic.options.atomic_dq = 1;
  atomic.workspaceBytes = attn_backward_atomic_workspace_size(&atomic.q);
  std::printf("atomic workspace: %lld bytes\n",
              static_cast<long long>(atomic.workspaceBytes));
  report("backward-atomic", atomic.call(module, stream));
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// The ordered dQ mode through Inputs/ordered-dq.manifest (bf16 d64, the
/// recompute, dq=atomic and dq=ordered sets): the ordered set by default,
/// dq_accum and dq_turns over the workspace, the atomic one when asked for,
/// and a workspace of the records alone refused before any launch.
int runLaunchOrderedDq(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  BackwardArgs a(ATTN_BF16, 64);
  a.workspaceBytes = attn_backward_atomic_workspace_size(&a.q);
  std::printf("workspace: %lld bytes\n",
              static_cast<long long>(a.workspaceBytes));
  report("ordered", a.call(module, stream));
  a.options.atomic_dq = 1;
  report("atomic", a.call(module, stream));
  a.options.atomic_dq = 0;
  a.workspaceBytes = 2 * 8 * 77 * 16;
  report("ordered-records", a.call(module, stream));
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// The atomic dQ mode through Inputs/atomic-dq.manifest (bf16 d64): which
/// set each call launches for its options->atomic_dq, dq_accum's words over
/// the workspace, and the calls that launch nothing.
int runLaunchAtomicDq(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  BackwardArgs a(ATTN_BF16, 64);
  int64_t bytes = attn_backward_workspace_size(&a.q);
  int64_t atomicBytes = attn_backward_atomic_workspace_size(&a.q);
  std::printf("workspace: %lld bytes, atomic: %lld bytes\n",
              static_cast<long long>(bytes),
              static_cast<long long>(atomicBytes));
  a.workspaceBytes = atomicBytes;
  report("deterministic", a.call(module, stream));
  a.options.atomic_dq = 1;
  report("atomic", a.call(module, stream));
  {
    // B = 1: 616 records of 16 bytes (9856), the accumulator at 9984.
    BackwardArgs b(ATTN_BF16, 64);
    for (attn_tensor *t :
         {&b.q, &b.k, &b.v, &b.o, &b.dout, &b.lse, &b.dq, &b.dk, &b.dv})
      t->shape[0] = 1;
    b.options.atomic_dq = 1;
    b.workspaceBytes = attn_backward_atomic_workspace_size(&b.q);
    std::printf("workspace B=1: atomic: %lld bytes\n",
                static_cast<long long>(b.workspaceBytes));
    report("atomic-b1", b.call(module, stream));
  }
  {
    BackwardArgs b(ATTN_BF16, 64);
    attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    mask.strides[0] = mask.strides[1] = 0;
    b.options.mask = &mask;
    b.options.atomic_dq = 1;
    b.workspaceBytes = atomicBytes;
    report("atomic-add-deterministic-only", b.call(module, stream));
    mask = maskOf(ATTN_BOOL, 2, 1, 1, 1000);
    b.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    report("atomic-br-bool", b.call(module, stream));
    b.options.atomic_dq = 0;
    b.workspaceBytes = bytes;
    report("atomic-br-bool-zero", b.call(module, stream));
  }
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  report("atomic-top-left-partial", a.call(module, stream));
  a = BackwardArgs(ATTN_BF16, 64);
  a.options.atomic_dq = 1;
  a.workspaceBytes = 2 * 8 * 77 * 16; // the recompute kernels' records
  report("atomic-small", a.call(module, stream));
  a.workspaceBytes = atomicBytes - 1;
  report("atomic-small-by-one", a.call(module, stream));
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// attn_forward, attn_decode (and its split count), attn_decode_paged,
/// attn_forward_varlen and attn_backward through Inputs/mod.manifest:
/// which kernels reach cuLaunchKernel for each options->mod, and that a
/// call for a modification the module lacks launches nothing.
int runLaunchMod(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  ForwardArgs f;
  report("forward", f.call(module, stream));
  f.options.mod = "softcap";
  report("forward-softcap", f.call(module, stream));
  f.options.mod = "relu2";
  report("forward-unknown", f.call(module, stream));
  {
    DecodeArgs d;
    d.options.mod = "softcap";
    int64_t splits = 0;
    report("splits-softcap", attn_decode_splits(module, &d.q, &d.k, &d.v,
                                                &d.options, 0, &splits));
    int64_t bytes = attn_decode_workspace_size(&d.q, &d.v, splits);
    std::printf("splits: %lld, workspace: %lld bytes\n",
                static_cast<long long>(splits), static_cast<long long>(bytes));
    report("decode-softcap",
           attn_decode(module, &d.q, &d.k, &d.v, &d.o, &d.lse, &d.options, 0,
                       reinterpret_cast<void *>(kWorkspace), bytes, stream));
    report("decode",
           attn_decode(module, &d.q, &d.k, &d.v, &d.o, &d.lse, nullptr, 0,
                       reinterpret_cast<void *>(kWorkspace), int64_t(1) << 30,
                       stream));
  }
  {
    PagedArgs a;
    report("decode-paged", a.call(module, stream));
    a.options.mod = "softcap";
    report("decode-paged-softcap", a.call(module, stream));
  }
  {
    VarlenArgs a;
    a.options.mod = "softcap";
    report("varlen-softcap", a.call(module, stream));
  }
  {
    BackwardArgs a;
    a.options.mod = "softcap";
    report("backward-softcap", a.call(module, stream));
    a.options.mod = "relu2";
    report("backward-unknown", a.call(module, stream));
  }
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// The calls of every kind through Inputs/mod-operands.manifest with the
/// tensors their modification reads: the words that reach cuLaunchKernel
/// (the mod operands' last, after the tensor maps; none for the combine
/// kernel), and that a call whose tensors do not fit launches nothing.
int runLaunchModOperands(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  DocmaskOperands docmask;
  {
    ForwardArgs f;
    docmask.use(f.options);
    report("forward", f.call(module, stream));
    f.options.num_mod_operands = 1;
    report("forward-count-1", f.call(module, stream));
    ForwardArgs s;
    attn_tensor scalar = scalarOf();
    s.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    s.options.mod = "scale";
    s.options.mod_operands = &scalar;
    s.options.num_mod_operands = 1;
    report("forward-scale", s.call(module, stream));
  }
  {
    DecodeArgs d;
    docmask.use(d.options);
    int64_t splits = 0;
    report("splits", attn_decode_splits(module, &d.q, &d.k, &d.v, &d.options, 0,
                                        &splits));
    int64_t bytes = attn_decode_workspace_size(&d.q, &d.v, splits);
    report("decode",
           attn_decode(module, &d.q, &d.k, &d.v, &d.o, &d.lse, &d.options, 0,
                       reinterpret_cast<void *>(kWorkspace), bytes, stream));
  }
  {
    PagedArgs a;
    docmask.use(a.options);
    report("decode-paged", a.call(module, stream));
  }
  {
    VarlenArgs a;
    docmask.use(a.options);
    report("varlen", a.call(module, stream));
  }
  {
    BackwardArgs a;
    docmask.use(a.options);
    report("backward", a.call(module, stream));
    a.options.mod_operands = nullptr;
    report("backward-array-null", a.call(module, stream));
  }
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// attn_forward and attn_backward through Inputs/blocks.manifest: the
/// kernel that reaches cuLaunchKernel for each options->block_mask and the
/// lists' words after the mask (and before the tensor maps); the calls
/// that refuse a block mask or have no kernel for it launch nothing.
int runLaunchBlocks(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  attn_block_mask blocks = blockMaskOf();
  {
    ForwardArgs f;
    report("forward", f.call(module, stream));
    f.options.block_mask = &blocks;
    report("forward-blocks", f.call(module, stream));
    // [1, 1, QB] full lists, PyTorch's expand of a mask shared by the
    // batch and heads: stride 0.
    attn_block_mask broadcast = blocks;
    broadcast.full_kv_counts = blockListOf(1, 1, 2, 0, kFullKvCounts);
    broadcast.full_kv_indices = blockListOf(1, 1, 2, 1, kFullKvIndices);
    f.options.block_mask = &broadcast;
    attn_tensor mask = maskOf(ATTN_BOOL, 2, 1, 1, 1000);
    f.options.mask = &mask;
    report("forward-bool-blocks", f.call(module, stream));
    f.options.mask = nullptr;
    f.options.block_mask = &blocks;
    f.options.causal = ATTN_CAUSAL_TOP_LEFT;
    report("forward-top-left-blocks", f.call(module, stream));
    attn_block_mask other = blockMaskOf(128, 128);
    f.options.block_mask = &other;
    f.options.causal = ATTN_CAUSAL_NONE;
    report("forward-128x128", f.call(module, stream));
    blocks.kv_indices.shape[2] = 3;
    f.options.block_mask = &blocks;
    report("forward-bad-list", f.call(module, stream));
    blocks = blockMaskOf();
  }
  {
    BackwardArgs b;
    b.options.block_mask = &blocks;
    report("backward-blocks", b.call(module, stream));
    b.options.atomic_dq = 1;
    b.workspaceBytes = attn_backward_atomic_workspace_size(&b.q);
    report("backward-blocks-atomic", b.call(module, stream));
    b.options.atomic_dq = 0;
    blocks.q_indices.data = nullptr;
    report("backward-no-q-lists", b.call(module, stream));
    blocks = blockMaskOf();
  }
  {
    DecodeArgs d;
    d.options.block_mask = &blocks;
    int64_t splits = 0;
    report("decode-splits", attn_decode_splits(module, &d.q, &d.k, &d.v,
                                               &d.options, 0, &splits));
    report("decode",
           attn_decode(module, &d.q, &d.k, &d.v, &d.o, &d.lse, &d.options, 0,
                       reinterpret_cast<void *>(kWorkspace), int64_t(1) << 30,
                       stream));
  }
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// Decode launches through Inputs/paged.manifest: attn_decode_paged on the
/// paged partial kernels (kv_lens and block_table after v), then the
/// combine, and attn_decode on the same module's unpaged partial kernel;
/// through Inputs/paged-balanced.manifest the same calls, a paged one on
/// the balanced pair (split_offsets after partial_lse) where it has one.
int runLaunchPaged(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  PagedArgs a;
  int64_t splits = 0;
  report("splits",
         attn_decode_paged_splits(module, &a.q, &a.k, &a.v, &a.blockTable,
                                  &a.kvLens, nullptr, 0, &splits));
  int64_t bytes = attn_decode_workspace_size(&a.q, &a.v, splits);
  std::printf("splits: %lld, workspace: %lld bytes\n",
              static_cast<long long>(splits), static_cast<long long>(bytes));
  a.workspaceBytes = bytes;
  report("decode-paged", a.call(module, stream));
  {
    PagedArgs b(2, 8, 64, 128, 40);
    b.k = bhsd(ATTN_BF16, 64, 8, 128, 128, kK);
    b.v = bhsd(ATTN_BF16, 64, 8, 128, 128, kV);
    b.setSeqQ(4);
    b.options = {0.0f, ATTN_CAUSAL_BOTTOM_RIGHT, -1, nullptr};
    b.splits = 2;
    report("decode-paged-br", b.call(module, stream));
  }
  {
    DecodeArgs d(4, 8, 8192);
    report("decode",
           attn_decode(module, &d.q, &d.k, &d.v, &d.o, &d.lse, nullptr, 0,
                       reinterpret_cast<void *>(kWorkspace), int64_t(1) << 30,
                       stream));
  }
  a.workspaceBytes = bytes - 1;
  report("decode-paged-small", a.call(module, stream));
  a = PagedArgs();
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  report("decode-paged-top-left", a.call(module, stream));
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// Forward launches through Inputs/varlen.manifest: attn_forward_varlen on
/// the packed kernels (query_offsets, then key_offsets or kv_lens and
/// block_table, after v) and attn_forward on the same module's plain one.
int runLaunchVarlen(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  void *stream = reinterpret_cast<void *>(0x5000);
  VarlenArgs a;
  a.maxSeqlenQ = 300;
  report("varlen", a.call(module, stream));
  a.maxSeqlenQ = 0;
  a.withLse = false;
  a.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
  report("varlen-br", a.call(module, stream));
  VarlenArgs b(/*paged=*/true, 3, 77);
  b.options = {0.5f, ATTN_CAUSAL_BOTTOM_RIGHT, 256, nullptr};
  b.maxSeqlenQ = 40;
  report("chunked", b.call(module, stream));
  ForwardArgs f;
  report("forward", f.call(module, stream));
  // Nothing reaches the driver for a bad call.
  a = VarlenArgs();
  a.options.causal = ATTN_CAUSAL_TOP_LEFT;
  report("varlen-top-left", a.call(module, stream));
  report("chunked-none", VarlenArgs(/*paged=*/true).call(module, stream));
  a = VarlenArgs();
  misalignPointer(a.keyOffsets, kKeyOffsets, 2);
  report("varlen-misaligned", a.call(module, stream));
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// Makes `values` device memory of FakeCuda.c (fakeCudaRegister), whose
/// cuMemcpyDtoHAsync then reads it; its address is the device address.
bool registerFakeMemory(const std::vector<int32_t> &values) {
  using Register = int (*)(const void *, size_t);
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto reg = driver
                 ? reinterpret_cast<Register>(dlsym(driver, "fakeCudaRegister"))
                 : nullptr;
  return reg && reg(values.data(), values.size() * sizeof(int32_t));
}

/// ATTN_RUNTIME_CHECK=1 (checked.test): attn_decode_paged through
/// `pagedManifest` and attn_forward_varlen through `varlenManifest` on
/// index tensors in FakeCuda.c's device memory (host buffers registered
/// with it), valid ones and each kind of bad value. Without the variable
/// the same calls launch, reading nothing.
int runChecked(const std::string &pagedManifest,
               const std::string &varlenManifest) {
  void *stream = reinterpret_cast<void *>(0x5000);
  attn_module *module = loadReported(pagedManifest);
  if (!module)
    return 0;
  // B = 2 sequences, P = 64 pages of 16 keys, 4 pages per sequence (a
  // capacity of 64 keys); block_table rows padded to 6 entries, so each
  // row is its own copy. Sequence 0's 40 keys occupy pages 0 to 2; its
  // entry for page 3 is never read and holds garbage.
  std::vector<int32_t> lens = {40, 64};
  std::vector<int32_t> table = {3, 7, 9, -12345, -1, -1, 0, 1, 2, 63, -1, -1};
  if (!registerFakeMemory(lens) || !registerFakeMemory(table)) {
    std::printf("setup failed: cannot register fake device memory\n");
    return 1;
  }
  PagedArgs a(2, 8, 64, 16, 4);
  a.kvLens.data = lens.data();
  a.blockTable.data = table.data();
  a.blockTable.strides[0] = 6;
  auto paged = [&](const char *name) { report(name, a.call(module, stream)); };
  paged("paged-valid");
  lens[1] = 65;
  paged("paged-len-too-long");
  lens[1] = 64;
  lens[0] = -1;
  paged("paged-len-negative");
  lens[0] = 40;
  table[9] = 64;
  paged("paged-page-past-pool");
  table[9] = 63;
  table[2] = -1;
  paged("paged-page-negative");
  table[2] = 9;
  lens[0] = 48;
  table[3] = 12345;
  paged("paged-page-unused");
  lens[0] = 49;
  paged("paged-page-used");
  lens[0] = 40;
  attn_module_destroy(module);

  module = loadReported(varlenManifest);
  if (!module)
    return 0;
  // Packed keys: B = 4 sequences of 100, 0, 300 and 600 query rows (T =
  // 1000) and 500, 500, 1000 and 1000 keys (Tk = 3000).
  std::vector<int32_t> queries = {0, 100, 100, 400, 1000};
  std::vector<int32_t> keys = {0, 500, 1000, 2000, 3000};
  if (!registerFakeMemory(queries) || !registerFakeMemory(keys)) {
    std::printf("setup failed: cannot register fake device memory\n");
    return 1;
  }
  VarlenArgs v;
  v.queryOffsets.data = queries.data();
  v.keyOffsets.data = keys.data();
  v.maxSeqlenQ = 600;
  auto varlen = [&](const char *name) { report(name, v.call(module, stream)); };
  varlen("varlen-valid");
  queries[0] = 3;
  varlen("varlen-first");
  queries[0] = 0;
  queries[2] = 50;
  varlen("varlen-decreasing");
  queries[2] = 100;
  queries[4] = 999;
  varlen("varlen-last");
  queries[4] = 1000;
  keys[4] = 2999;
  varlen("varlen-keys-last");
  keys[4] = 3000;
  v.maxSeqlenQ = 599;
  varlen("varlen-max-seqlen");
  // <= 0 means T, more than T is clamped to T: nothing to check.
  v.maxSeqlenQ = 0;
  varlen("varlen-max-seqlen-0");
  v.maxSeqlenQ = 5000;
  varlen("varlen-max-seqlen-past-t");
  // A paged cache (chunked prefill): B = 3 sequences of 30, 0 and 47 new
  // queries against 100, 0 and 4096 keys (the capacity: 256 pages of 16) of
  // P = 1000 pages.
  std::vector<int32_t> chunkQueries = {0, 30, 30, 77};
  std::vector<int32_t> chunkLens = {100, 0, 4096};
  std::vector<int32_t> chunkTable(3 * 256, 999);
  if (!registerFakeMemory(chunkQueries) || !registerFakeMemory(chunkLens) ||
      !registerFakeMemory(chunkTable)) {
    std::printf("setup failed: cannot register fake device memory\n");
    return 1;
  }
  VarlenArgs c(/*paged=*/true, 3, 77);
  c.options.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
  c.queryOffsets.data = chunkQueries.data();
  c.kvLens.data = chunkLens.data();
  c.blockTable.data = chunkTable.data();
  c.maxSeqlenQ = 47;
  auto chunked = [&](const char *name) {
    report(name, c.call(module, stream));
  };
  chunked("chunked-valid");
  chunkLens[2] = 4097;
  chunked("chunked-len-too-long");
  chunkLens[2] = 4096;
  chunkTable[2 * 256 + 255] = 1000;
  chunked("chunked-page-past-pool");
  chunkTable[2 * 256 + 255] = 999;
  chunkQueries[3] = 78;
  chunked("chunked-last");
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// Forward launches through a manifest of several sections
/// (Inputs/multi.manifest): the module has the kernels of the section
/// chosen for the device, and only those.
int runLaunchMulti(const std::string &manifest) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 0;
  std::printf("target: %s\n", attn_module_target(module));
  void *stream = reinterpret_cast<void *>(0x5000);
  const attn_causal kinds[] = {ATTN_CAUSAL_NONE, ATTN_CAUSAL_TOP_LEFT,
                               ATTN_CAUSAL_BOTTOM_RIGHT};
  for (attn_causal causal : kinds) {
    ForwardArgs a;
    a.options.causal = causal;
    std::string name = std::string("forward-") + causalName(causal);
    report(name.c_str(), a.call(module, stream));
  }
  attn_module_destroy(module);
  std::printf("destroyed\n");
  return 0;
}

/// The C API fuzzed with random descriptors through the fake driver: each
/// call starts from a valid forward, decode, paged decode, backward or
/// packed forward (attn_forward_varlen) call and gets a few
/// random mutations (null or misaligned pointers, ranks, negative, zero or huge
/// sizes and strides, bad enums, outputs overlapping inputs, odd options,
/// block masks, split counts and workspaces). Every call must return a status, with a
/// message when it is not ATTN_OK; a crash or a sanitizer report fails.
int runFuzz(const std::string &manifest, int64_t cases, uint64_t seed) {
  attn_module *module = loadReported(manifest);
  if (!module)
    return 1;
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t n) {
    return static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
  };
  const int64_t sizes[] = {0,         1,         -1,       2,    7,
                           16,        77,        128,      1000, 1 << 20,
                           INT32_MAX, INT64_MAX, INT64_MIN};
  auto anySize = [&] { return sizes[pick(std::size(sizes))]; };
  auto mutateTensor = [&](attn_tensor &t) {
    switch (pick(8)) {
    case 0:
      t.data =
          pick(2) ? nullptr : reinterpret_cast<void *>(0x100001 + pick(15));
      break;
    case 1:
      t.rank = static_cast<int32_t>(pick(7)) - 1;
      break;
    case 2:
      t.shape[pick(4)] = anySize();
      break;
    case 3:
      t.strides[pick(4)] = anySize();
      break;
    case 4:
      t.dtype = static_cast<attn_dtype>(pick(8) - 2);
      break;
    case 5:
      for (int d = 0; d < 4; ++d)
        t.strides[d] = 0;
      break;
    case 6: {
      // One more or one fewer, wrapping at the ends of int64 (a size set to
      // INT64_MIN or INT64_MAX before): the runtime refuses either way.
      int64_t &size = t.shape[pick(4)];
      size = static_cast<int64_t>(static_cast<uint64_t>(size) +
                                  static_cast<uint64_t>(pick(3) - 1));
      break;
    }
    default:
      t.data = reinterpret_cast<void *>(kQ); // overlaps q
      break;
    }
  };
  // Modification names: the manifests', none, and names no manifest has.
  const std::string longMod(200, 'm');
  const char *mods[] = {
      "softcap", "h0123456789012345", "",     "soft-cap", longMod.c_str(),
      "relu2",   "docmask",           "scale"};
  // The tensors a modification reads: docmask's (DocmaskOperands) and
  // scale's, at times one of them mutated, in counts the kernels read and
  // others.
  DocmaskOperands docmask;
  attn_tensor operands[3];
  auto mutateOperands = [&](attn_options &o) {
    o.mod = pick(4) ? "docmask" : mods[pick(std::size(mods))];
    operands[0] = docmask.operands[0];
    operands[1] = docmask.operands[1];
    operands[2] = scalarOf();
    if (pick(2))
      mutateTensor(operands[pick(3)]);
    const int64_t counts[] = {2, 2, 1, 0, 3, -1, 17, INT64_MIN};
    o.num_mod_operands = counts[pick(std::size(counts))];
    o.mod_operands = pick(8) ? operands : nullptr;
  };
  // A block mask of either size the manifests have, at times with a bad
  // list or block size.
  attn_block_mask blocks = blockMaskOf();
  auto mutateBlocks = [&] {
    blocks = blockMaskOf(pick(2) ? 64 : 128, pick(2) ? 128 : 64);
    attn_tensor *lists[] = {&blocks.kv_counts,      &blocks.kv_indices,
                            &blocks.full_kv_counts, &blocks.full_kv_indices,
                            &blocks.q_counts,       &blocks.q_indices,
                            &blocks.full_q_counts,  &blocks.full_q_indices};
    switch (pick(4)) {
    case 0:
      mutateTensor(*lists[pick(std::size(lists))]);
      break;
    case 1:
      blocks.block_q = anySize();
      break;
    case 2:
      blocks.block_k = anySize();
      break;
    default:
      break;
    }
  };
  auto mutateOptions = [&](attn_options &o, attn_tensor &mask) {
    switch (pick(9)) {
    case 0:
      o.scale = std::numeric_limits<float>::quiet_NaN();
      break;
    case 1:
      o.scale = pick(2) ? std::numeric_limits<float>::infinity() : 1e-45f;
      break;
    case 2:
      o.causal = static_cast<attn_causal>(pick(6) - 1);
      break;
    case 3:
      o.window = anySize();
      o.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
      break;
    case 4:
      mask = maskOf(pick(2) ? ATTN_BOOL : ATTN_BF16, 2, 1, 77, 1000);
      mutateTensor(mask);
      o.mask = &mask;
      break;
    case 5:
      o.mod = mods[pick(std::size(mods))];
      break;
    case 6:
      mutateBlocks();
      o.block_mask = &blocks;
      break;
    case 7:
      mutateOperands(o);
      break;
    default:
      o.mask = &mask;
      mask = maskOf(ATTN_F16, anySize(), 1, 77, 1000);
      break;
    }
  };
  // One to three mutations of a call that takes a workspace (backward,
  // decode): its options, its own argument (`own`), the workspace's size
  // or address, or one of its tensors.
  auto mutateWorkspaceCall = [&](attn_options &options, attn_tensor &mask,
                                 uint64_t &workspace, int64_t &workspaceBytes,
                                 auto &targets, auto own) {
    for (int64_t m = 1 + pick(3); m > 0; --m) {
      switch (pick(6)) {
      case 0:
        mutateOptions(options, mask);
        break;
      case 1:
        own();
        break;
      case 2:
        workspaceBytes = anySize();
        break;
      case 3:
        workspace = pick(2) ? 0 : kWorkspace + 1 + pick(15);
        break;
      default:
        mutateTensor(*targets[pick(std::size(targets))]);
        break;
      }
    }
  };
  int64_t served = 0, rejected = 0;
  for (int64_t n = 0; n < cases; ++n) {
    attn_tensor mask = maskOf(ATTN_BF16, 1, 1, 77, 1000);
    attn_status status;
    int64_t kind = pick(5);
    if (kind == 4) {
      VarlenArgs a(pick(2) != 0, 1 + pick(8), 1 + pick(4096), 1 + pick(8192));
      attn_tensor *targets[] = {
          &a.q,      &a.k,          &a.v, &a.queryOffsets, &a.keyOffsets,
          &a.kvLens, &a.blockTable, &a.o, &a.lse};
      for (int64_t m = 1 + pick(3); m > 0; --m) {
        switch (pick(6)) {
        case 0:
          mutateOptions(a.options, mask);
          break;
        case 1:
          a.maxSeqlenQ = anySize();
          break;
        case 2:
          a.withLse = pick(4) != 0;
          break;
        default:
          mutateTensor(*targets[pick(std::size(targets))]);
          break;
        }
      }
      // Now and then the other keys as well, or none.
      ForwardTensors t = a.tensors();
      switch (pick(8)) {
      case 0:
        t.keyOffsets = &a.keyOffsets;
        break;
      case 1:
        t.kvLens = &a.kvLens;
        t.blockTable = pick(2) ? &a.blockTable : nullptr;
        break;
      case 2:
        t.keyOffsets = t.kvLens = t.blockTable = nullptr;
        break;
      default:
        break;
      }
      status = attn_forward_varlen(module, pick(16) ? t.q : nullptr, t.k, t.v,
                                   t.queryOffsets, t.keyOffsets, t.kvLens,
                                   t.blockTable, t.o, t.lse, a.maxSeqlenQ,
                                   pick(8) ? &a.options : nullptr, nullptr);
    } else if (kind == 3) {
      PagedArgs a(1 + pick(8), pick(2) ? 8 : 32, 1 + pick(4096),
                  pick(2) ? 16 : 1 + pick(256), 1 + pick(1024));
      attn_tensor *targets[] = {&a.q,      &a.k, &a.v,  &a.blockTable,
                                &a.kvLens, &a.o, &a.lse};
      mutateWorkspaceCall(a.options, mask, a.workspace, a.workspaceBytes,
                          targets, [&] { a.splits = anySize(); });
      int64_t bytes = attn_decode_workspace_size(&a.q, &a.v, a.splits);
      int64_t splits = 0;
      (void)attn_decode_paged_splits(module, &a.q, &a.k, &a.v, &a.blockTable,
                                     &a.kvLens, &a.options, a.splits, &splits);
      if (pick(2))
        a.workspaceBytes = bytes;
      status = a.call(module, nullptr);
    } else if (kind == 2) {
      BackwardArgs a(pick(2) ? ATTN_BF16 : ATTN_F16, pick(2) ? 128 : 64,
                     pick(2));
      // Either dQ mode (any nonzero value asks for the atomic one).
      a.options.atomic_dq = static_cast<int32_t>(pick(3)) - 1;
      attn_tensor *targets[] = {&a.q,   &a.k,  &a.v,  &a.o, &a.dout,
                                &a.lse, &a.dq, &a.dk, &a.dv};
      mutateWorkspaceCall(a.options, mask, a.workspace, a.workspaceBytes,
                          targets, [&] {
                            if (pick(2))
                              a.withLse = pick(4) != 0;
                            else
                              a.options.atomic_dq = !a.options.atomic_dq;
                          });
      int64_t bytes = attn_backward_workspace_size(&a.q);
      int64_t atomicBytes = attn_backward_atomic_workspace_size(&a.q);
      // Now and then exactly a size function's bytes: the deterministic
      // kernels' is too small for the atomic ones.
      switch (pick(4)) {
      case 0:
        a.workspaceBytes = bytes;
        break;
      case 1:
        a.workspaceBytes = atomicBytes;
        break;
      default:
        break;
      }
      status = a.call(module, nullptr);
    } else if (kind == 1) {
      ForwardArgs a;
      attn_tensor *targets[] = {&a.q, &a.k, &a.v, &a.o, &a.lse};
      for (int64_t m = 1 + pick(3); m > 0; --m) {
        if (pick(4) == 0)
          mutateOptions(a.options, mask);
        else
          mutateTensor(*targets[pick(5)]);
      }
      bool noOptions = pick(8) == 0, noLse = pick(4) == 0;
      status = attn_forward(module, pick(16) ? &a.q : nullptr, &a.k, &a.v, &a.o,
                            noLse ? nullptr : &a.lse,
                            noOptions ? nullptr : &a.options, nullptr);
    } else {
      DecodeArgs a(1 + pick(8), pick(2) ? 8 : 32, 1 + pick(70000));
      attn_tensor *targets[] = {&a.q, &a.k, &a.v, &a.o, &a.lse};
      mutateWorkspaceCall(a.options, mask, a.workspace, a.workspaceBytes,
                          targets, [&] { a.splits = anySize(); });
      int64_t bytes = attn_decode_workspace_size(&a.q, &a.v, a.splits);
      int64_t splits = 0;
      (void)attn_decode_splits(module, &a.q, &a.k, &a.v, &a.options, a.splits,
                               &splits);
      status = attn_decode(module, &a.q, &a.k, &a.v, &a.o, &a.lse, &a.options,
                           a.splits, reinterpret_cast<void *>(a.workspace),
                           pick(2) ? bytes : a.workspaceBytes, nullptr);
    }
    if (status == ATTN_OK) {
      ++served;
    } else {
      ++rejected;
      const char *message = attn_last_error();
      if (!message || !*message) {
        std::printf("call %lld: status %d without a message\n",
                    static_cast<long long>(n), static_cast<int>(status));
        return 1;
      }
    }
  }
  attn_module_destroy(module);
  std::printf("fuzz: %lld calls, %lld served, %lld rejected\n",
              static_cast<long long>(cases), static_cast<long long>(served),
              static_cast<long long>(rejected));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s manifest|ptx|forward|mask|tma|decode|paged|"
                 "balanced|varlen|backward|backward-atomic|"
                 "backward-ordered|backward-tma|mod FILE|load DIR|"
                 "launch FILE|launch-tma FILE|launch-multi FILE|"
                 "launch-backward FILE|launch-backward-tma FILE|"
                 "launch-atomic-dq FILE|launch-ordered-dq FILE|"
                 "launch-paged FILE|launch-varlen FILE|launch-mod FILE|"
                 "blocks FILE|launch-blocks FILE|mod-operands FILE|"
                 "launch-mod-operands FILE|checked PAGED VARLEN|"
                 "fuzz FILE CASES SEED\n",
                 argv[0]);
    return 2;
  }
  std::string what = argv[1];
  if (what == "manifest")
    return runManifest();
  if (what == "ptx")
    return runPtx();
  if (what == "forward")
    return runForward();
  if (what == "mask")
    return runMask();
  if (what == "tma")
    return runTma();
  if (what == "decode")
    return runDecode();
  if (what == "paged")
    return runPaged();
  if (what == "balanced")
    return runBalanced();
  if (what == "varlen")
    return runVarlen();
  if (what == "backward")
    return runBackward();
  if (what == "backward-ordered")
    return runBackwardOrdered();
  if (what == "backward-atomic")
    return runBackwardAtomic();
  if (what == "backward-tma")
    return runBackwardTma();
  if (what == "mod" && argc == 3)
    return runMod(argv[2]);
  if (what == "blocks" && argc == 3)
    return runBlocks(argv[2]);
  if (what == "mod-operands" && argc == 3)
    return runModOperands(argv[2]);
  if (what == "load" && argc == 3)
    return runLoad(argv[2]);
  if (what == "launch" && argc == 3)
    return runLaunch(argv[2]);
  if (what == "launch-tma" && argc == 3)
    return runLaunchTma(argv[2]);
  if (what == "launch-multi" && argc == 3)
    return runLaunchMulti(argv[2]);
  if (what == "launch-backward" && argc == 3)
    return runLaunchBackward(argv[2]);
  if (what == "launch-backward-tma" && argc == 3)
    return runLaunchBackwardTma(argv[2]);
  if (what == "launch-ordered-dq" && argc == 3)
    return runLaunchOrderedDq(argv[2]);
  if (what == "launch-atomic-dq" && argc == 3)
    return runLaunchAtomicDq(argv[2]);
  if (what == "launch-paged" && argc == 3)
    return runLaunchPaged(argv[2]);
  if (what == "launch-mod" && argc == 3)
    return runLaunchMod(argv[2]);
  if (what == "launch-blocks" && argc == 3)
    return runLaunchBlocks(argv[2]);
  if (what == "launch-mod-operands" && argc == 3)
    return runLaunchModOperands(argv[2]);
  if (what == "launch-varlen" && argc == 3)
    return runLaunchVarlen(argv[2]);
  if (what == "checked" && argc == 4)
    return runChecked(argv[2], argv[3]);
  if (what == "fuzz" && argc == 5)
    return runFuzz(argv[2], std::atoll(argv[3]),
                   std::strtoull(argv[4], nullptr, 10));
  std::fprintf(stderr, "unknown or incomplete command '%s'\n", what.c_str());
  return 2;
}
