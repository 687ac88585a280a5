//===- attn-opt.cpp - mlir-opt with the attn dialect and passes -----------===//

#include "attn/Registration/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAttnPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::attn::registerAttnDialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn optimizer driver\n", registry));
}
