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

/* jansson's encoder and parser go on after a failed allocation with a
 * text or a value that is not the right one (base/json.c): kjudge uses
 * kj__json_loadb, kj__json_load_file, kj__json_dumps, kj_json_text and
 * kj_json_print instead. */
#undef json_dumps
#define json_dumps(v, f) KJ__BANNED(json_dumps)
#undef json_dumpf
#define json_dumpf(v, o, f) KJ__BANNED(json_dumpf)
#undef json_dumpb
#define json_dumpb(v, b, s, f) KJ__BANNED(json_dumpb)
#undef json_dumpfd
#define json_dumpfd(v, o, f) KJ__BANNED(json_dumpfd)
#undef json_dump_file
#define json_dump_file(v, p, f) KJ__BANNED(json_dump_file)
#undef json_dump_callback
#define json_dump_callback(v, c, d, f) KJ__BANNED(json_dump_callback)
#undef json_loads
#define json_loads(s, f, e) KJ__BANNED(json_loads)
#undef json_loadb
#define json_loadb(b, n, f, e) KJ__BANNED(json_loadb)
#undef json_loadf
#define json_loadf(i, f, e) KJ__BANNED(json_loadf)
#undef json_loadfd
#define json_loadfd(i, f, e) KJ__BANNED(json_loadfd)
#undef json_load_file
#define json_load_file(p, f, e) KJ__BANNED(json_load_file)
#undef json_load_callback
#define json_load_callback(c, d, f, e) KJ__BANNED(json_load_callback)

#endif /* KJ_BANNED_H */
