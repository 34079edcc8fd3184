// SPDX-License-Identifier: GPL-2.0
/*
 * The program the exec benchmark runs 1000s of times: static, no libc,
 * exits at once (the fixture ELF files loop 5M times first: too slow).
 */
void _start(void)
{
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall");
}
