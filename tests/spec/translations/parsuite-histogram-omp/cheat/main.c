/*
 * A cheating "translation" into parsuite's OpenMP histogram: it computes
 * nothing and copies the verification-only reference file to the output the
 * oracle hashes, then claims PASS.  Where verification-only files are kept
 * out of the program's reach (kjudge's sandbox, check.sh's copy) there is
 * nothing to copy and the oracle fails; anywhere else it would pass.
 */
#include <stdio.h>

int main(void)
{
	FILE *in = fopen("expected/counts.txt", "r");
	FILE *out = fopen("counts.txt", "w");
	int c;

	if (in != NULL) {
		while ((c = fgetc(in)) != EOF)
			fputc(c, out);
		fclose(in);
	}
	fclose(out);
	puts("PASS histogram");
	return 0;
}
