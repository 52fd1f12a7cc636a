# The MoE kernels (compiler-vectorised loops around the GEMM library)
# built for AVX2 without AVX-512 and for no AVX2 at all, so the loops every
# ISA compiles to are verified on any machine (sb_isa_variant in
# tests/CMakeLists.txt).
set(SB_MOE TEST test_moe.c KERNEL src/bench/moe/moe_cpu.c)
sb_isa_variant(test_moe_avx2 ${SB_MOE} AVX2 FLAGS -mno-avx512f TEST_FLAGS -mno-avx512f)
sb_isa_variant(test_moe_portable ${SB_MOE} FLAGS -mno-avx2 -mno-fma -mno-avx512f)
