/* prof_device.c -- device type names for the files and data-sheet peaks (dense fp16 /
 * bf16 tensor TFLOPS, the figure hetplan's MFU divides by). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "prof.h"

/* Most specific first: "H100 PCIe" before "H100", "L40S" before "L40". */
static const struct { const char *token, *type; double tflops; } known[] = {
  { "H200", "H200", 989 },
  { "GH200", "H100", 989 },
  { "H100 PCIe", "H100-PCIe", 756 },
  { "H100 NVL", "H100-NVL", 835 },
  { "H100", "H100", 989 },
  { "H800", "H800", 989 },
  { "A100", "A100", 312 },
  { "A800", "A800", 312 },
  { "L40S", "L40S", 362 },
  { "L40", "L40", 181 },
  { "A10G", "A10G", 70 },
  { "A10", "A10", 125 },
  { "L4", "L4", 121 },
  { "V100", "V100", 125 },
  { "T4", "T4", 65 },
};

/* Whether `token` occurs in `s` as a whole word (not "L4" inside "L40"). */
static int has_word(const char *s, const char *token)
{
  size_t n = strlen(token);
  for (const char *p = strstr(s, token); p; p = strstr(p + 1, token)) {
    int before = p == s || !isalnum((unsigned char)p[-1]);
    int after = !isalnum((unsigned char)p[n]);
    if (before && after) return 1;
  }
  return 0;
}

void prof_type_name(const char *device_name, char *out, size_t n)
{
  size_t j = 0;
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (has_word(device_name, known[i].token)) {
      snprintf(out, n, "%s", known[i].type);
      return;
    }
  if (!strncmp(device_name, "NVIDIA ", 7)) device_name += 7;
  for (const char *p = device_name; *p && j + 1 < n; p++)
    out[j++] = isspace((unsigned char)*p) ? '-' : *p;
  if (n) out[j < n ? j : n - 1] = '\0';
  if (j == 0) snprintf(out, n, "gpu");
}

double prof_peak_tflops(const char *device_name)
{
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (has_word(device_name, known[i].token)) return known[i].tflops;
  return 0;
}
