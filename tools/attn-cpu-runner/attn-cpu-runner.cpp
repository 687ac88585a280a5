//===- attn-cpu-runner.cpp - run attn IR on the CPU and check it ----------===//
//
// The CPU execution harness. It lowers IR through a pass pipeline (default
// `attn-to-llvm`), JIT-compiles it, runs it on fresh random inputs and
// checks the results:
//
//   attn-cpu-runner --case="op=attention b=2 hq=8 hkv=2 sq=77 sk=33 ..."
//   attn-cpu-runner --random=40 --seed=7 --ops=attention,split,grad
//   attn-cpu-runner --random=20 --random-block-sizes=16,32
//       Builds attn IR for each case and compares it with a float64
//       reference written in C++ (Reference.cpp), independent of MLIR.
//   attn-cpu-runner file.mlir --entry=f --compare-pass=attn-raise
//       Runs @f as written and after the extra pass, on the same random
//       inputs, and compares the two (numerical equivalence of a rewrite).
//       Only @f and the functions it calls are compiled.
//
// Every case prints one PASS/FAIL line with its errors; the exit code is
// non-zero when any case fails.
//
//===----------------------------------------------------------------------===//

#include "Case.h"
#include "HostTensor.h"

#include "attn/Registration/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <sstream>

using namespace mlir;
using namespace harness;

namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[input.mlir]"),
                                      cl::init(""));
static cl::list<std::string>
    caseSpecs("case", cl::desc("A case as key=value words (repeatable)"));
static cl::opt<unsigned> numRandom("random",
                                   cl::desc("Number of random cases to run"),
                                   cl::init(0));
static cl::opt<uint64_t> seedOpt("seed", cl::desc("Seed of the random cases"),
                                 cl::init(1));
static cl::opt<std::string>
    opsOpt("ops", cl::desc("Op kinds of random cases: attention,split,grad"),
           cl::init("attention,split,grad"));
static cl::list<int64_t> randomBlockSizes(
    "random-block-sizes",
    cl::desc("Give half of the random attention and grad cases a block mask "
             "of blocks of these sizes (the pipeline's tiles must divide "
             "them); none without"),
    cl::CommaSeparated);
static cl::opt<std::string>
    pipelineOpt("pipeline",
                cl::desc("Pass pipeline to the LLVM dialect (textual, "
                         "anchored on builtin.module)"),
                cl::init("attn-to-llvm"));
static cl::opt<std::string>
    entryOpt("entry", cl::desc("Function to run in file mode"), cl::init(""));
static cl::opt<std::string> comparePass(
    "compare-pass",
    cl::desc("File mode: also run after this pass pipeline and compare"),
    cl::init(""));
static cl::opt<double> rtolOpt("rtol",
                               cl::desc("File mode: relative tolerance "
                                        "(default by element type)"),
                               cl::init(-1));
static cl::opt<double> atolOpt("atol",
                               cl::desc("File mode: absolute tolerance "
                                        "(default by element type)"),
                               cl::init(-1));
static cl::opt<bool> printIR("print-ir",
                             cl::desc("Print each case's input IR"),
                             cl::init(false));

namespace {

/// The element type of a tensor type as a DType, if attn's harness has one.
FailureOr<DType> dtypeOf(Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isInteger(1))
    return DType::I1;
  if (t.isInteger(32))
    return DType::I32;
  return failure();
}

/// Lowers `module` with `pipeline`, JIT-compiles it and runs `entry` on
/// `inputs`. Returns the results or an error message in `error`.
FailureOr<std::vector<HostTensor>>
runModule(ModuleOp module, StringRef pipeline, StringRef entry,
          std::vector<HostTensor> &inputs, std::string &error) {
  llvm::raw_string_ostream err(error);
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func) {
    err << "no function @" << entry;
    return failure();
  }
  // Result `index` of the entry, of `shape`, within the runner's limit.
  auto checkResult = [&](size_t index,
                         const std::vector<int64_t> &shape) -> LogicalResult {
    std::string problem = checkTensorSize(
        "result " + std::to_string(index) + " of @" + entry.str(), shape);
    if (problem.empty())
      return success();
    err << problem;
    return failure();
  };
  std::vector<std::pair<int64_t, DType>> results;
  for (Type t : func.getFunctionType().getResults()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    FailureOr<DType> dt = tensor ? dtypeOf(tensor.getElementType()) : FailureOr<DType>(failure());
    if (failed(dt)) {
      err << "result type " << t << " is not a ranked f32/f16/bf16/i1 tensor";
      return failure();
    }
    // The compiled code allocates the results and the runner copies them:
    // their static dims (dynamic ones counted as 1) within the limit.
    std::vector<int64_t> shape;
    for (int64_t d : tensor.getShape())
      shape.push_back(ShapedType::isDynamic(d) ? 1 : d);
    if (failed(checkResult(results.size(), shape)))
      return failure();
    results.push_back({tensor.getRank(), *dt});
  }
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(module.getContext()));

  PassManager pm(module.getContext());
  std::string diag;
  llvm::raw_string_ostream diagOs(diag);
  if (failed(parsePassPipeline(pipeline, pm, diagOs))) {
    err << "bad pipeline '" << pipeline << "': " << diag;
    return failure();
  }
  if (failed(pm.run(module))) {
    err << "pipeline '" << pipeline << "' failed";
    return failure();
  }

  // options.transformer is a function_ref: the function must outlive it.
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = transformer;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine) {
    err << "JIT failed: " << llvm::toString(engine.takeError());
    return failure();
  }

  size_t resultWords = 0;
  for (auto [rank, dt] : results)
    resultWords += 3 + 2 * rank;
  std::vector<int64_t> resultBuffer(resultWords, 0);
  std::vector<Descriptor> descriptors;
  for (HostTensor &t : inputs)
    descriptors.emplace_back(t);
  std::vector<void *> pointers;
  pointers.push_back(resultBuffer.data());
  for (Descriptor &d : descriptors)
    pointers.push_back(d.words.data());
  std::vector<void *> packed;
  size_t first = results.empty() ? 1 : 0;
  for (size_t i = first; i < pointers.size(); ++i)
    packed.push_back(&pointers[i]);
  if (llvm::Error e = (*engine)->invokePacked(
          ("_mlir_ciface_" + entry).str(), packed)) {
    err << "invocation failed: " << llvm::toString(std::move(e));
    return failure();
  }

  std::vector<HostTensor> outs;
  std::set<int64_t> inputPtrs, freed;
  for (HostTensor &t : inputs)
    inputPtrs.insert(reinterpret_cast<int64_t>(t.bytes.data()));
  size_t off = 0;
  for (auto [rank, dt] : results) {
    std::vector<int64_t> shape(&resultBuffer[off + 3],
                               &resultBuffer[off + 3 + rank]);
    if (failed(checkResult(outs.size(), shape)))
      return failure();
    outs.push_back(readDescriptor(&resultBuffer[off], rank, dt));
    int64_t allocated = resultBuffer[off];
    if (allocated && !inputPtrs.count(allocated) && freed.insert(allocated).second)
      std::free(reinterpret_cast<void *>(allocated));
    off += 3 + 2 * rank;
  }
  return outs;
}

struct Comparison {
  bool ok = true;
  double maxAbs = 0, maxRel = 0;
  std::string firstBad;
};

/// Compares element-wise: |got - ref| <= atol * max(1, max|ref|) + rtol |ref|.
/// Infinities must match exactly; NaN passes only where `ref` is NaN too and
/// `nanMatches` (two runs of the same computation, both overflowing alike),
/// never against the float64 reference.
Comparison compare(const std::vector<double> &got,
                   const std::vector<double> &ref, double atol, double rtol,
                   bool nanMatches = false) {
  Comparison c;
  if (got.size() != ref.size()) {
    c.ok = false;
    c.firstBad = "size " + std::to_string(got.size()) + " vs expected " +
                 std::to_string(ref.size());
    return c;
  }
  double scale = 1.0;
  for (double r : ref)
    if (std::isfinite(r))
      scale = std::max(scale, std::fabs(r));
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], r = ref[i];
    bool good;
    if (std::isnan(r) && std::isnan(g))
      good = nanMatches;
    else if (std::isinf(r) || std::isinf(g))
      good = g == r;
    else {
      double diff = std::fabs(g - r);
      c.maxAbs = std::max(c.maxAbs, diff);
      c.maxRel = std::max(c.maxRel, diff / scale);
      good = diff <= atol * scale + rtol * std::fabs(r);
    }
    if (!good && c.ok) {
      c.ok = false;
      std::ostringstream os;
      os << "element " << i << ": got " << g << ", expected " << r;
      c.firstBad = os.str();
    }
  }
  return c;
}

std::string format(double v) {
  std::ostringstream os;
  os.precision(2);
  os << std::scientific << v;
  return os.str();
}

/// Runs one generated case; prints its PASS/FAIL line.
bool runCase(MLIRContext &ctx, const Case &c) {
  std::string ir = c.toIR();
  if (printIR)
    llvm::outs() << ir;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &ctx);
  if (!module) {
    llvm::outs() << "FAIL " << c.str() << " | generated IR does not parse\n";
    return false;
  }
  std::vector<HostTensor> inputs = c.makeInputs();
  std::string error;
  FailureOr<std::vector<HostTensor>> outs =
      runModule(*module, pipelineOpt, "kernel", inputs, error);
  if (failed(outs)) {
    llvm::outs() << "FAIL " << c.str() << " | " << error << "\n";
    return false;
  }
  std::vector<std::vector<double>> expected = c.expectedOutputs(inputs);
  std::vector<std::string> names = c.resultNames();
  bool ok = true;
  std::ostringstream line;
  for (size_t i = 0; i < expected.size(); ++i) {
    double atol, rtol;
    c.tolerance(i, atol, rtol);
    Comparison cmp = compare((*outs)[i].toDoubles(), expected[i], atol, rtol);
    line << " | " << names[i] << " max_abs=" << format(cmp.maxAbs)
         << " tol=" << format(atol) << "+" << format(rtol) << "*|ref|";
    if (!cmp.ok) {
      ok = false;
      line << " BAD: " << cmp.firstBad;
    }
  }
  llvm::outs() << (ok ? "PASS " : "FAIL ") << c.str() << line.str() << "\n";
  return ok;
}

/// Erases the functions that `entry` does not reach through symbol uses, so
/// that file mode lowers and JIT-compiles only what it runs: a test file may
/// hold other functions (negative cases, dynamic shapes) that need not lower.
void keepOnlyReachable(ModuleOp module, func::FuncOp entry) {
  llvm::SmallPtrSet<Operation *, 8> live;
  SmallVector<Operation *> worklist = {entry};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!live.insert(op).second)
      continue;
    std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(op);
    if (!uses)
      continue;
    for (const SymbolTable::SymbolUse &use : *uses)
      if (Operation *callee = SymbolTable::lookupNearestSymbolFrom(
              module, use.getSymbolRef()))
        worklist.push_back(callee);
  }
  for (func::FuncOp f :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!live.contains(f))
      f.erase();
}

/// File mode: runs @entry with and without `comparePass` on the same inputs.
bool runFile(MLIRContext &ctx) {
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &ctx);
  if (!module) {
    llvm::errs() << "error: could not parse " << inputFile << "\n";
    return false;
  }
  func::FuncOp func;
  if (entryOpt.empty()) {
    for (auto f : module->getOps<func::FuncOp>())
      if (!f.isExternal()) {
        func = f;
        break;
      }
  } else {
    func = module->lookupSymbol<func::FuncOp>(entryOpt);
  }
  if (!func) {
    llvm::errs() << "error: no function to run"
                 << (entryOpt.empty() ? "" : " named @" + entryOpt) << "\n";
    return false;
  }
  std::string entry = func.getSymName().str();
  keepOnlyReachable(*module, func);

  std::mt19937_64 rng(seedOpt);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<HostTensor> inputs;
  for (auto [i, t] : llvm::enumerate(func.getFunctionType().getInputs())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    FailureOr<DType> dt = tensor ? dtypeOf(tensor.getElementType()) : FailureOr<DType>(failure());
    if (failed(dt) || !tensor.hasStaticShape()) {
      llvm::errs() << "error: argument " << i << " of @" << entry
                   << " has type " << t
                   << "; file mode needs statically shaped f32/f16/bf16/"
                      "i1/i32 tensors\n";
      return false;
    }
    std::vector<int64_t> shape(tensor.getShape());
    if (std::string problem = checkTensorSize(
            "argument " + std::to_string(i) + " of @" + entry, shape);
        !problem.empty()) {
      llvm::errs() << "error: " << problem << "\n";
      return false;
    }
    // i32 arguments are zero (key counts, block tables: every index they
    // drive stays in bounds).
    HostTensor h(*dt, shape);
    for (int64_t j = 0; j < h.numElements() && *dt != DType::I32; ++j)
      h.set(j, *dt == DType::I1 ? (uni(rng) > -0.6) : uni(rng));
    inputs.push_back(std::move(h));
  }

  OwningOpRef<ModuleOp> transformed = module->clone();
  std::string error;
  std::vector<HostTensor> inputsA = inputs, inputsB = inputs;
  FailureOr<std::vector<HostTensor>> a =
      runModule(*module, pipelineOpt, entry, inputsA, error);
  if (failed(a)) {
    llvm::outs() << "FAIL @" << entry << " | " << error << "\n";
    return false;
  }
  if (comparePass.empty()) {
    for (auto [i, t] : llvm::enumerate(*a)) {
      llvm::outs() << "result " << i << ":";
      for (int64_t j = 0; j < std::min<int64_t>(t.numElements(), 8); ++j)
        llvm::outs() << " " << t.get(j);
      llvm::outs() << "\n";
    }
    return true;
  }
  PassManager pm(&ctx);
  std::string diag;
  llvm::raw_string_ostream diagOs(diag);
  if (failed(parsePassPipeline(comparePass, pm, diagOs)) ||
      failed(pm.run(*transformed))) {
    llvm::outs() << "FAIL @" << entry << " | compare pass '" << comparePass
                 << "' failed " << diag << "\n";
    return false;
  }
  FailureOr<std::vector<HostTensor>> b =
      runModule(*transformed, pipelineOpt, entry, inputsB, error);
  if (failed(b)) {
    llvm::outs() << "FAIL @" << entry << " after " << comparePass << " | "
                 << error << "\n";
    return false;
  }
  bool ok = true;
  std::ostringstream line;
  for (size_t i = 0; i < a->size(); ++i) {
    DType dt = (*a)[i].dtype;
    double unit = dt == DType::F16    ? 1.0 / (1 << 10)
                  : dt == DType::BF16 ? 1.0 / (1 << 7)
                                      : 1e-5 / 4;
    double atol = atolOpt >= 0 ? atolOpt : 4 * unit;
    double rtol = rtolOpt >= 0 ? rtolOpt : 4 * unit;
    Comparison cmp =
        compare((*b)[i].toDoubles(), (*a)[i].toDoubles(), atol, rtol,
                /*nanMatches=*/true);
    line << " | result " << i << " max_abs=" << format(cmp.maxAbs)
         << " tol=" << format(atol) << "+" << format(rtol) << "*|ref|";
    if (!cmp.ok) {
      ok = false;
      line << " BAD: " << cmp.firstBad;
    }
  }
  llvm::outs() << (ok ? "PASS @" : "FAIL @") << entry << " " << comparePass
               << " vs original" << line.str() << "\n";
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerAllPasses();
  mlir::attn::registerAttnPasses();
  cl::ParseCommandLineOptions(argc, argv, "attn CPU execution harness\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  mlir::attn::registerAttnDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  if (!inputFile.empty())
    return runFile(ctx) ? 0 : 1;

  std::vector<Case> cases;
  for (const std::string &spec : caseSpecs) {
    Case c;
    std::string problem = c.parse(spec);
    if (!problem.empty()) {
      llvm::errs() << "error: bad case '" << spec << "': " << problem << "\n";
      return 2;
    }
    cases.push_back(c);
  }
  std::vector<std::string> ops;
  std::stringstream opList(opsOpt);
  for (std::string op; std::getline(opList, op, ',');)
    ops.push_back(op);
  std::vector<int64_t> blockSizes(randomBlockSizes.begin(),
                                  randomBlockSizes.end());
  for (int64_t size : blockSizes)
    if (size < 1 || size > (int64_t(1) << 16)) {
      llvm::errs() << "error: --random-block-sizes must be in [1, 65536]\n";
      return 2;
    }
  std::mt19937_64 rng(seedOpt);
  for (unsigned i = 0; i < numRandom; ++i)
    cases.push_back(Case::random(rng, ops, blockSizes));
  if (cases.empty()) {
    llvm::errs() << "error: nothing to run: give --case, --random or a file\n";
    return 2;
  }
  unsigned passed = 0;
  for (const Case &c : cases)
    passed += runCase(ctx, c);
  llvm::outs() << passed << " of " << cases.size() << " cases passed\n";
  return passed == cases.size() ? 0 : 1;
}
