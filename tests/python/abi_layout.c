/*
 * tests/python/abi_layout.c — the C side of test_abi.py: prints the size
 * of every structure the Python package mirrors with ctypes, and the
 * offset of each field, one "Struct.field offset" (or "Struct size") per
 * line, so a header change not made in python/teenyc/_lib.py fails.
 */
#include <stddef.h>
#include <stdio.h>

#include "teeny/client.h"

#define SIZE(py, c) printf("%s %zu\n", py, sizeof(c))
#define OFF(py, c, f) printf("%s.%s %zu\n", py, #f, offsetof(c, f))

int main(void) {
  SIZE("DtypeBinding", teeny_dtype_binding);
  SIZE("ConstBinding", teeny_const_binding);
  OFF("ConstBinding", teeny_const_binding, value);
  SIZE("CompileReq", teeny_compile_req);
  OFF("CompileReq", teeny_compile_req, kernel);
  OFF("CompileReq", teeny_compile_req, nconsts);
  OFF("CompileReq", teeny_compile_req, num_warps);
  OFF("CompileReq", teeny_compile_req, compiler_version);
  SIZE("Param", teeny_param);
  SIZE("Artifact", teeny_artifact);
  OFF("Artifact", teeny_artifact, key);
  OFF("Artifact", teeny_artifact, entry);
  OFF("Artifact", teeny_artifact, ptx);
  OFF("Artifact", teeny_artifact, params);
  OFF("Artifact", teeny_artifact, shared_bytes);
  OFF("Artifact", teeny_artifact, compile_ns);
  SIZE("Diag", teeny_diag);
  OFF("Diag", teeny_diag, message);
  SIZE("Diags", teeny_diags);
  SIZE("Result", teeny_client_result);
  OFF("Result", teeny_client_result, art);
  OFF("Result", teeny_client_result, cache);
  OFF("Result", teeny_client_result, compile_ms);
  OFF("Result", teeny_client_result, ndiags);
  OFF("Result", teeny_client_result, cubin);
  OFF("Result", teeny_client_result, cubin_toolchain);
  SIZE("Grid", teeny_grid);
  SIZE("TensorDesc", teeny_tensor_desc);
  OFF("TensorDesc", teeny_tensor_desc, base);
  OFF("TensorDesc", teeny_tensor_desc, shape);
  OFF("TensorDesc", teeny_tensor_desc, stride);
  OFF("TensorDesc", teeny_tensor_desc, rank);
  OFF("TensorDesc", teeny_tensor_desc, tma);
  SIZE("TuneConfig", teeny_tune_config);
  OFF("TuneConfig", teeny_tune_config, num_warps);
  SIZE("TuneBench", teeny_tune_bench);
  OFF("TuneBench", teeny_tune_bench, grid);
  OFF("TuneBench", teeny_tune_bench, rep_ms);
  SIZE("TuneReq", teeny_tune_req);
  OFF("TuneReq", teeny_tune_req, grid);
  OFF("TuneReq", teeny_tune_req, stream);
  OFF("TuneReq", teeny_tune_req, timer);
  OFF("TuneReq", teeny_tune_req, driver);
  SIZE("TuneResult", teeny_tune_result);
  OFF("TuneResult", teeny_tune_result, config);
  OFF("TuneResult", teeny_tune_result, source);
  OFF("TuneResult", teeny_tune_result, lookup_ms);
  SIZE("ClientOpts", teeny_client_opts);
  OFF("ClientOpts", teeny_client_opts, timeout_ms);
  OFF("ClientOpts", teeny_client_opts, memo_entries);
  OFF("ClientOpts", teeny_client_opts, restart_wait_ms);
  SIZE("GenericInfo", teeny_generic_info);
  OFF("GenericInfo", teeny_generic_info, const_dtype);
  OFF("GenericInfo", teeny_generic_info, allowed);
  SIZE("ParamInfo", teeny_param_info);
  OFF("ParamInfo", teeny_param_info, generic);
  SIZE("KernelInfo", teeny_kernel_info);
  OFF("KernelInfo", teeny_kernel_info, params);
  OFF("KernelInfo", teeny_kernel_info, forward);
  SIZE("SourceInfo", teeny_source_info);
  OFF("SourceInfo", teeny_source_info, nkernels);
  printf("EMIT_MLIR %u\nEMIT_PTX %u\nEMIT_SOURCE %u\nCLIENT_FORCE %u\nPARAM_POINTER %d\n",
         (unsigned)TEENY_EMIT_MLIR, (unsigned)TEENY_EMIT_PTX, (unsigned)TEENY_EMIT_SOURCE,
         (unsigned)TEENY_CLIENT_FORCE, (int)TEENY_PARAM_POINTER);
  return 0;
}
