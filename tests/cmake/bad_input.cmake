# Bad input: every public call with NULL, wrong-class, wrong-state,
# bad-flag, zero and huge arguments, each row checking the error code
# (tests/device/test_bad_input.c). A device test: the objects need rxe.
fd_device_test(test_bad_input)
