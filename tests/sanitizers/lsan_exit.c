/* Leak check for processes that end in _exit().
 *
 * LeakSanitizer checks at exit() time. The device tests' forked sides (the
 * client of fdt_run_pair, fdt_run_isolated's children) end with _exit(),
 * which skips that check, so their leaks would go unseen. In the
 * AddressSanitizer build the test executables are linked with
 * -Wl,--wrap=_exit (tests/cmake/sanitize.cmake): each of their own calls of
 * _exit() comes here first, and a process about to exit successfully runs
 * the leak check and fails (LeakSanitizer's exit code 23) when it finds
 * one. A process already failing keeps its own code. */
#include <sanitizer/lsan_interface.h>

void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

void __wrap__exit(int status)
{
	if (status == 0 && __lsan_do_recoverable_leak_check())
		status = 23;
	__real__exit(status);
}
