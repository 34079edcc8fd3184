# SPDX-License-Identifier: GPL-2.0
# Counts the TAP of a test run, for scripts/test.sh (a host test's output)
# and tests/qemu/run.sh (a guest's tests.log):
#
#   awk -f scripts/tap.awk [-v expected=LIST] [-v need_plan=1] FILE
#
# FILE holds sections, each one program's TAP between the lines
# "mmap3-test: begin NAME" and "mmap3-test: end NAME rc=N" (N its exit
# status). Prints "P F S", the passed, failed and skipped tests over all
# sections, on stdout, and a line per section with results and per failure
# on stderr. A section fails once more when:
#  - its program exited with neither 0 nor 4 (kselftest's skip) and no
#    TAP line failed;
#  - it has a plan ("1..N") and did not run N tests, or N is 0 (a program
#    that skipped as a whole), or it has none and need_plan is set.
# A skip counts as skipped when LIST (newline-separated "NAME: TEST"
# lines, tests/qemu/expected-skips) names it or when no LIST is given,
# else as failed.
BEGIN {
	strict = expected != ""
	n = split(expected, e, "\n")
	for (i = 1; i <= n; i++) ok[e[i]] = 1
}
{ sub(/\r$/, "") }
/^mmap3-test: begin / { name = $3; tp = tf = ts = 0; plan = -1; next }
/^mmap3-test: end / {
	rc = $4; sub("rc=", "", rc)
	if (rc != 0 && rc != 4 && tf == 0) {
		tf = 1; print "  " name ": exited with " rc " (no TAP failure line)" > "/dev/stderr"
	}
	if (plan == 0 || (plan > 0 && plan != tp + tf + ts) || (plan < 0 && need_plan)) {
		tf++
		print "  FAIL: " name ": planned " (plan < 0 ? "no" : plan) " tests, ran " \
			tp + tf + ts - 1 > "/dev/stderr"
	}
	# A section without test results (the demo, the benchmark) has
	# nothing to count: only its failure is worth a line.
	if (tp + tf + ts > 0)
		printf "  %-28s %3d passed, %d failed, %d skipped\n", name, tp, tf, ts > "/dev/stderr"
	P += tp; F += tf; S += ts; name = ""; next
}
name != "" && /^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; next }
name != "" && /^(not )?ok [0-9]+/ {
	if ($0 ~ /# *(SKIP|skip)/) {
		t = $0; sub(/^ok [0-9]+ (- )?/, "", t); sub(/ *# *(SKIP|skip).*/, "", t)
		if (!strict || (name ": " t) in ok) ts++
		else { tf++; print "  FAIL: " name ": unexpected skip: " $0 > "/dev/stderr" }
	}
	else if ($1 == "not") { tf++; print "  FAIL: " name ": " $0 > "/dev/stderr" }
	else tp++
}
END { print P + 0, F + 0, S + 0 }
