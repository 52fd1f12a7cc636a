# The moe and ops areas end to end: every benchmark validates on small
# shapes (fp32 and bf16), metrics follow the documented formulas, one-expert
# routing works, bad parameters exit 2 naming the parameter. Kernel
# verification, planted errors, the tie rule and formulas in detail are
# unit.test_moe and unit.test_ops.
add_test(NAME cli.moe_ops COMMAND bash ${SB_TEST_DIR}/scripts/moe_ops_cli.sh ${SOLBENCH})
set_tests_properties(cli.moe_ops PROPERTIES TIMEOUT 120)
