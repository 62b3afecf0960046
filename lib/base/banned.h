/*
 * banned.h - libc functions kjudge does not call.
 *
 * Each is either unbounded (strcpy, strcat, sprintf, gets), not thread-safe
 * (strtok, localtime, gmtime, ctime, asctime) or easy to misuse on untrusted
 * input (atoi and friends report no errors).  Including this header last makes
 * any use a compile error that names the reason.
 */
#ifndef KJ_BANNED_H
#define KJ_BANNED_H

#define KJ__BANNED(func) sorry_##func##_is_banned_in_kjudge

#undef strcpy
#define strcpy(x, y) KJ__BANNED(strcpy)
#undef strcat
#define strcat(x, y) KJ__BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) KJ__BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) KJ__BANNED(strncat)
#undef sprintf
#define sprintf(...) KJ__BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) KJ__BANNED(vsprintf)
#undef gets
#define gets(x) KJ__BANNED(gets)
#undef strtok
#define strtok(x, y) KJ__BANNED(strtok)
#undef atoi
#define atoi(x) KJ__BANNED(atoi)
#undef atol
#define atol(x) KJ__BANNED(atol)
#undef atof
#define atof(x) KJ__BANNED(atof)
#undef localtime
#define localtime(t) KJ__BANNED(localtime)
#undef gmtime
#define gmtime(t) KJ__BANNED(gmtime)
#undef ctime
#define ctime(t) KJ__BANNED(ctime)
#undef asctime
#define asctime(t) KJ__BANNED(asctime)

#endif /* KJ_BANNED_H */
