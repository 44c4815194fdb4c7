/* launch_registry.c -- the one list of export formats (`hetplan export --format NAME`),
 * each an entry of launch.h in its own file; a format's number (hp_launch_format) is its
 * place here, so the built-in ones keep the order of the HP_LAUNCH_* constants. */
#include <stdio.h>
#include <string.h>

#include "launch.h"

extern const hp_launch_fmt hp_launch_fmt_megatron;
extern const hp_launch_fmt hp_launch_fmt_deepspeed;
extern const hp_launch_fmt hp_launch_fmt_torchrun;
extern const hp_launch_fmt hp_launch_fmt_slurm;

static const hp_launch_fmt *const all_formats[] = {
  &hp_launch_fmt_megatron,
  &hp_launch_fmt_deepspeed,
  &hp_launch_fmt_torchrun,
  &hp_launch_fmt_slurm,
  NULL };

#define N_FORMATS ((int)(sizeof all_formats / sizeof all_formats[0]) - 1)

const hp_launch_fmt *hp__launch_fmt(int f)
{
  return f >= 0 && f < N_FORMATS ? all_formats[f] : NULL;
}

int hp_launch_format_parse(const char *s)
{
  if (!s) return -1;
  for (int f = 0; f < N_FORMATS; f++)
    if (!strcmp(all_formats[f]->name, s)) return f;
  return -1;
}

const char *hp_launch_format_name(int f)
{
  const hp_launch_fmt *e = hp__launch_fmt(f);
  return e ? e->name : NULL;
}

char *hp_launch_format_list(char *buf, unsigned long n, const char *sep, const char *last)
{
  size_t len = 0;
  if (n == 0) return buf;
  buf[0] = '\0';
  for (int f = 0; f < N_FORMATS && len < n; f++)
    len += (size_t)snprintf(buf + len, n - len, "%s%s",
                            f == 0 ? "" : f == N_FORMATS - 1 ? last : sep, all_formats[f]->name);
  return buf;
}
