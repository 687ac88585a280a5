//===- attn-compile.cpp - attn IR to PTX plus a kernel manifest -----------===//
//
// The driver that applications use ahead of time:
//
//   attn-compile model.mlir -o out/ [--chip=sm_90a[,sm_80...]] [--raise]
//                [--persistent] [--atomic-dq] [--block-kv=N]
//
// runs `attn-to-ptx` (after `attn-raise` with --raise) once per chip and
// writes out/attn.manifest and the PTX, the files attn's runtime loads
// (docs/KernelABI.md): for one chip out/attn_kernels.ptx; for several,
// out/attn_kernels.<chip>.ptx each, and a manifest with one section per
// chip, from which the runtime takes the one the device runs best.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"
#include "attn/Registration/Registration.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<input.mlir>"));
static cl::opt<std::string> outDir("o", cl::Required,
                                   cl::desc("Output directory"));
static cl::list<std::string>
    chips("chip", cl::CommaSeparated,
          cl::desc("sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a, or several, "
                   "comma-separated (default sm_90a); each chip's kernels "
                   "fit its shared memory (163 KiB on sm_80 and sm_87, "
                   "99 KiB on sm_86 and sm_89, 227 KiB on sm_90)"));
static cl::opt<bool> raise("raise", cl::init(false),
                           cl::desc("Run attn-raise first (front-end IR)"));
static cl::opt<bool>
    persistent("persistent", cl::init(false),
               cl::desc("sm_90a: persistent warp-specialised forward kernels "
                        "(off by default: measured slower, docs/GPU.md)"));

static cl::opt<bool> atomicDq(
    "atomic-dq", cl::init(false),
    cl::desc("sm_90a: backward kernels in the atomic dQ mode (dK/dV kernel "
             "adds dQ with f32 atomics; faster, not bitwise reproducible; "
             "manifest dq=atomic) instead of the deterministic ones"));

static cl::opt<bool> orderedDq(
    "ordered-dq", cl::init(false),
    cl::desc("sm_90a: deterministic backward kernels whose dK/dV kernel adds "
             "dQ in a fixed order (manifest dq=ordered) where the head dim "
             "is a multiple of 32 and there is no block mask"));

static cl::opt<bool>
    tf32("tf32", cl::init(false),
         cl::desc("f32 operands: one TF32 tensor-core product per step "
                  "(10-bit mantissas; manifest f32=tf32, picked by the "
                  "runtime's options.allow_tf32) instead of 3xTF32"));

static cl::opt<int64_t>
    blockKV("block-kv", cl::init(0),
            cl::desc("Keys per K/V tile of every attention op, a multiple of "
                     "16 (0, the default: attn-tile's cost model chooses per "
                     "kernel); for tuning"));

static constexpr llvm::StringLiteral kPtxName = "attn_kernels.ptx";

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  registerAllPasses();
  attn::registerAttnPasses();
  cl::ParseCommandLineOptions(argc, argv, "attn: attn IR to PTX + manifest\n");
  SmallVector<std::string> targets(chips.begin(), chips.end());
  if (targets.empty())
    targets.push_back("sm_90a");
  for (auto [i, chip] : llvm::enumerate(targets)) {
    if (!llvm::is_contained(
            {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"}, chip)) {
      llvm::errs() << "error: --chip must be sm_80, sm_86, sm_87, sm_89, "
                      "sm_90 or sm_90a (or a comma-separated list of them), "
                      "got '"
                   << chip << "'\n";
      return 1;
    }
    if (llvm::is_contained(ArrayRef(targets).take_front(i), chip)) {
      llvm::errs() << "error: --chip names " << chip << " twice\n";
      return 1;
    }
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  attn::registerAttnDialects(registry);
  MLIRContext ctx(registry);

  llvm::SourceMgr sourceMgr;
  // Diagnostics as file:line:col with the source line, as attn-opt prints
  // them.
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &ctx);
  if (!module)
    return 1;

  // One run of the pipeline per chip, each on its own copy of the module.
  struct Compiled {
    std::string chip, ptxName, ptx;
    ArrayAttr manifest;
  };
  SmallVector<Compiled> compiled;
  for (const std::string &chip : targets) {
    OwningOpRef<ModuleOp> copy(module->clone());
    PassManager pm(&ctx);
    if (raise) {
      std::string err;
      llvm::raw_string_ostream os(err);
      if (failed(parsePassPipeline("attn-raise", pm, os))) {
        llvm::errs() << "error: " << err << "\n";
        return 1;
      }
    }
    attn::AttnToPTXPipelineOptions options;
    options.chip = chip;
    options.persistent = persistent;
    options.deterministic = !atomicDq;
    options.orderedDq = orderedDq;
    options.tf32 = tf32;
    options.blockKV = blockKV;
    attn::buildAttnToPTXPipeline(pm, options);
    if (failed(pm.run(*copy)))
      return 1;
    auto manifest = (*copy)->getAttrOfType<ArrayAttr>("attn.manifest");
    auto binary = copy->lookupSymbol<gpu::BinaryOp>("attn_kernels");
    if (!manifest || !binary || binary.getObjects().empty()) {
      llvm::errs() << "error: " << inputFile
                   << " holds no attn op to compile for the GPU\n";
      return 1;
    }
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    std::string ptxName = targets.size() == 1
                              ? kPtxName.str()
                              : ("attn_kernels." + chip + ".ptx");
    compiled.push_back(
        {chip, ptxName, object.getObject().getValue().str(), manifest});
  }

  if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
    llvm::errs() << "error: cannot create " << outDir << ": " << ec.message()
                 << "\n";
    return 1;
  }
  auto write = [&](StringRef name, function_ref<void(llvm::raw_ostream &)> fn) {
    SmallString<256> path(outDir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      llvm::errs() << "error: cannot write " << path << ": " << ec.message()
                   << "\n";
      return false;
    }
    fn(os);
    return true;
  };
  bool ok = true;
  for (const Compiled &c : compiled)
    ok &= write(c.ptxName, [&](llvm::raw_ostream &os) { os << c.ptx; });
  ok &= write("attn.manifest", [&](llvm::raw_ostream &os) {
    os << "attn-manifest 1\n# generated by attn-compile from " << inputFile
       << "\n";
    for (const Compiled &c : compiled) {
      os << "target " << c.chip << "\nptx " << c.ptxName << "\n";
      for (Attribute line : c.manifest) {
        auto text = dyn_cast<StringAttr>(line);
        if (!text) {
          llvm::errs() << "error: attn.manifest holds " << line
                       << ", not a manifest line\n";
          ok = false;
          continue;
        }
        os << text.getValue() << "\n";
      }
    }
  });
  return ok ? 0 : 1;
}
