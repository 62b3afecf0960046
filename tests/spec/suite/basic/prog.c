/*
 * prog.c - the program of tests/spec's specs: one behaviour per mode (its
 * first argument), each a case of kjudge spec verify's tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog.h"

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ok";

	if (!strcmp(mode, "ok")) {
		/* A result, a completion marker and an output file. */
		printf("argv0 %s\nresult: %s\n%s\n", argv[0], argc > 2 ? argv[2] : RESULT, MARKER);
		return write_file("out.txt", "hello\n") ? 1 : 0;
	}
	if (!strcmp(mode, "both")) {
		/* A translation that prints both markers. */
		printf("PASS\nFAIL: 3 of 10 values wrong\n");
		return 0;
	}
	if (!strcmp(mode, "hang")) {
		for (;;)
			pause();
	}
	if (!strcmp(mode, "big")) {
		/* 1 GB into a file, 1 MiB at a time. */
		static char block[1 << 20];
		FILE *f = fopen("out.bin", "w");
		int i;

		memset(block, 'x', sizeof(block));
		for (i = 0; f && i < 1024; i++)
			if (fwrite(block, 1, sizeof(block), f) != sizeof(block))
				return 4;
		return f && fclose(f) == 0 ? 0 : 4;
	}
	if (!strcmp(mode, "flood")) {
		static char block[1 << 16];

		memset(block, 'y', sizeof(block));
		for (;;)
			if (fwrite(block, 1, sizeof(block), stdout) != sizeof(block))
				return 4;
	}
	if (!strcmp(mode, "fork")) {
		/* Forks without end; each child sleeps.  Stopped by the process
		 * limit: the first fork refused ends it. */
		for (;;) {
			pid_t p = fork();

			if (p < 0) {
				perror("fork");
				return 3;
			}
			if (p == 0) {
				for (;;)
					pause();
			}
		}
	}
	if (!strcmp(mode, "symlink")) {
		/* The output is a link to a file outside the working directory. */
		unlink("out.txt");
		if (symlink("/etc/hostname", "out.txt") < 0)
			return 5;
		printf("%s\n", MARKER);
		return 0;
	}
	if (!strcmp(mode, "exit")) {
		printf("%s\n", MARKER);
		return argc > 2 ? atoi(argv[2]) : 3;
	}
	if (!strcmp(mode, "peek")) {
		/* What the sandbox lets it see of the judge's files. */
		printf("expected.txt %s\n", access("expected.txt", F_OK) == 0 ? "present" : "absent");
		printf("secret.txt %s\n", access("secret.txt", F_OK) == 0 ? "present" : "absent");
		printf("%s\n", MARKER);
		return 0;
	}
	if (!strcmp(mode, "read")) {
		/* Each file named after the mode: its first line, or that it is
		 * not there. */
		int i;

		for (i = 2; i < argc; i++) {
			char line[256] = "";
			FILE *f = fopen(argv[i], "r");

			if (f && fgets(line, sizeof(line), f))
				printf("%s: %s", argv[i], line);
			else
				printf("%s: absent\n", argv[i]);
			if (f)
				fclose(f);
		}
		printf("%s\n", MARKER);
		return 0;
	}
	fprintf(stderr, "unknown mode '%s'\n", mode);
	return 2;
}
