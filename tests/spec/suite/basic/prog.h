/* prog.h - what the reference prints; a translation may change it. */
#define RESULT "1.5"
#define MARKER "Ending simulation"
