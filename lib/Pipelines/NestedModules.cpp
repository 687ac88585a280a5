//===- NestedModules.cpp - a pipeline on every nested module --------------===//
//
// attn-nested-modules: the first stage of attn-to-llvm, declared with the
// passes that leave the attn dialect (include/attn/Conversion/Passes.td).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNNESTEDMODULESPASS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnNestedModulesPass
    : public attn::impl::AttnNestedModulesPassBase<AttnNestedModulesPass> {
  using Base::Base;

  /// The pipeline's dialects, which it may create in the nested modules.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    for (const OpPassManager &pm : pipeline)
      pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp root = getOperation();
    // The pipelines run on modules: one anchored on another op would run on
    // ops it was not built for.
    for (const OpPassManager &pm : pipeline) {
      StringRef anchor = pm.getOpAnchorName();
      if (anchor == ModuleOp::getOperationName() ||
          anchor == OpPassManager::getAnyOpAnchorName())
        continue;
      root.emitError() << "attn-nested-modules: 'pipeline' must run on "
                          "'builtin.module' (or 'any'), got a pipeline on '"
                       << anchor << "'";
      return signalPassFailure();
    }
    // Post-order: a module's nested modules are lowered before it is.
    SmallVector<ModuleOp> nested;
    root->walk<WalkOrder::PostOrder>([&](ModuleOp module) {
      if (module != root)
        nested.push_back(module);
    });
    for (ModuleOp module : nested)
      for (OpPassManager &pm : pipeline)
        if (failed(runPipeline(pm, module)))
          return signalPassFailure();
  }
};
} // namespace
