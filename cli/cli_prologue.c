/* cli_prologue.c -- what every command does before its own work, as its table says
 * (cli.h): flags parsed against the table, --help, the command's checks, the outputs
 * checked against the inputs (cli_outputs.c), -o checked writable, the
 * problem and plan loaded (a plan file's "inputs" filling the flags not given), profile
 * coverage and --strict-profile, limits, progress, interrupts; and the cleanup after. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Whether the schedule of the last problem loaded was chosen by --schedule or the job
 * file; if not, a plan file's own schedule is taken (adopt_plan_schedule). */
static int schedule_chosen;

/* A plan file read for a problem whose schedule neither --schedule nor the job file
 * chose sets it: a GPipe plan needs no --schedule gpipe. */
static void adopt_plan_schedule(hp_problem *prob, const hp_plan *plan)
{
  if (!schedule_chosen) prob->job.schedule = plan->schedule;
}

int cli_sharding_parse(const char *s)
{
  unsigned mask = 0;
  const char *p = s;
  if (!s || !*s) return -1;
  for (;;) {
    char word[16];
    size_t n = strcspn(p, ",");
    int m;
    if (n == 0 || n >= sizeof word) return -1;   /* "dp,,zdp", a trailing comma, a long word */
    memcpy(word, p, n);
    word[n] = '\0';
    if ((m = hp_shard_parse(word)) < 0) return -1;
    mask |= 1u << m;
    if (!p[n]) break;
    p += n + 1;
  }
  return (int)mask;
}

int cli_slices_parse(const char *s)
{
  char *end;
  long v;
  if (!s || *s < '0' || *s > '9') return -1;
  v = strtol(s, &end, 10);
  if (*end || v < 1 || v > (1L << 20) || (v & (v - 1))) return -1;
  return (int)v;
}

char *cli_sharding_text(unsigned mask, char *buf, size_t n)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int m = 0; m < HP_N_SHARD && len < n; m++)
    if (mask >> m & 1u) len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", hp_shard_name(m));
  return buf;
}

/* The job's 1.2 flags over the job file's keys (cost-model.md 1): a flag given wins; a
 * switch can only turn its field on. */
static void job_flags(const cli_core *o, hp_job *job)
{
  if (o->sequence_parallel) job->sequence_parallel = 1;
  if (o->grad_sync) job->grad_sync = (hp_grad_sync)hp_grad_sync_parse(o->grad_sync);
  if (o->sharding) job->sharding = (unsigned)cli_sharding_parse(o->sharding);
  if (o->uniform_sharding) job->uniform_sharding = 1;
  if (o->idle_devices) job->idle_devices = 1;
  if (o->max_slices) job->max_slices = cli_slices_parse(o->max_slices);
  if (o->framework) job->framework = hp_framework_parse(o->framework);
  if (o->compute_model) job->compute_model = hp_compute_model_parse(o->compute_model);
}

/* Loads model, cluster, optional profile and job from the flags into a problem. */
static int load_problem(const cli_core *o, const char *cmd, hp_problem **out)
{
  hp_diag d;
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *p = NULL;
  hp_job job = { .gbs = 0, .schedule = HP_1F1B };
  hp_err err;

  cli_core filled;
  cli_diag_init(&d);
  *out = NULL;
  if (o->plan) {   /* a plan file names the files it was planned from (cli_inputs.c) */
    filled = *o;
    int got = cli_plan_inputs(&filled);
    if (got < 0) return -got;            /* its "inputs" refused: the reason was printed */
    o = &filled;
  }
  if (!o->model) return cli_usage_error(cmd, "missing --model FILE");
  if (!o->cluster) return cli_usage_error(cmd, "missing --cluster FILE");
  schedule_chosen = o->schedule != NULL;
  if (o->job) {
    hp_job other = { .gbs = 0, .schedule = HP_GPIPE };   /* keys a job file lacks leave a job as it was */
    if ((err = hp_job_load(o->job, &job, &d))) return cli_fail(&d, err);
    if (hp_job_load(o->job, &other, &d) == HP_OK && other.schedule == job.schedule)
      schedule_chosen = 1;
  }
  if (o->gbs > 0) job.gbs = o->gbs;
  if (o->accept_profile_mismatch) job.accept_profile_mismatch = 1;   /* the flag, or the job key */
  if (o->schedule) job.schedule = (hp_schedule)hp_schedule_parse(o->schedule);
  job_flags(o, &job);
  if (job.gbs <= 0) return cli_usage_error(cmd, "missing --gbs N (the global batch size)");
  if ((err = hp_model_load(o->model, &m, &d))) return cli_fail(&d, err);
  if ((err = hp_cluster_load(o->cluster, &c, &d))) {
    hp_model_destroy(&m);
    return cli_fail(&d, err);
  }
  if (o->mem_margin >= 0) c->mem_margin = o->mem_margin;   /* the flag wins over the file */
  if (o->profile && (err = hp_profile_load(o->profile, &p, &d))) {
    hp_model_destroy(&m);
    hp_cluster_destroy(&c);
    return cli_fail(&d, err);
  }
  if ((err = hp_problem_create(out, m, c, p, job, &d))) return cli_fail(&d, err);
  return EXIT_OK_;
}

/* Loads the problem and the plan of --plan (whose schedule it adopts, as above) and
 * validates the plan; prints errors; 0 or an exit code. */
static int load_plan(const cli_core *o, const char *cmd, hp_problem **prob, hp_plan **plan)
{
  hp_diag d;
  hp_err err;
  int rc;
  *prob = NULL;
  *plan = NULL;
  if (!o->plan) return cli_usage_error(cmd, "missing --plan FILE");
  if ((rc = load_problem(o, cmd, prob))) return rc;
  cli_diag_init(&d);
  if (!(err = hp_plan_load(o->plan, *prob, plan, &d))) adopt_plan_schedule(*prob, *plan);
  if (err || (err = hp_plan_validate(*prob, *plan, &d))) {
    hp_problem_destroy(prob);
    hp_plan_destroy(plan);
    return cli_fail(&d, err);
  }
  return EXIT_OK_;
}

/* The coverage of the search space (printed on stderr) or of the plan (kept), and
 * --strict-profile. */
static int coverage(cli_ctx *c)
{
  int space = (c->cmd->steps & CLI_COVER_SPACE) != 0, rc;
  if ((rc = cli_coverage(c->prob, space ? HP_COV_SPACE : HP_COV_PLAN, space ? NULL : c->plan,
                         &c->cov)))
    return rc;
  if (space) cli_print_coverage(stderr, c->prob, c->cov);
  if (c->core.strict_profile && (rc = cli_strict_profile(c->prob, c->cov))) return rc;
  if (space) hp_coverage_destroy(&c->cov);
  return EXIT_OK_;
}

static int prologue(cli_ctx *c, int argc, char **argv)
{
  const cli_cmd *cmd = c->cmd;
  unsigned st = cmd->steps;
  int rc = EXIT_OK_;
  cli_core_init(&c->core);
  hp_limits_init(&c->lim);
  if (st & CLI_ANY_ARGS) return EXIT_OK_;
  if ((rc = cli_parse(cmd, argc, argv, 2, &c->core, c->opts))) return rc;
  if (c->core.help) {
    fputs(cmd->help, stdout);
    return CLI_DONE;
  }
  if (cmd->check && (rc = cmd->check(c))) return rc;
  if ((rc = cli_check_outputs(c))) return rc;     /* no output may be an input */
  if ((st & CLI_CHECK_OUT) && (rc = cli_check_output(c->core.out))) return rc;  /* before, not after */
  if ((st & CLI_PLAN) || ((st & CLI_PLAN_IF_GIVEN) && c->core.plan))
    rc = load_plan(&c->core, cmd->name, &c->prob, &c->plan);
  else if (st & (CLI_PROBLEM | CLI_PLAN_IF_GIVEN))
    rc = load_problem(&c->core, cmd->name, &c->prob);
  if (rc) return rc;
  if ((st & (CLI_COVER_SPACE | CLI_COVER_PLAN)) && (rc = coverage(c))) return rc;
  c->lim.time_limit = c->core.time_limit;
  c->lim.seed = (unsigned long)c->core.seed;
  c->lim.max_work = c->core.max_work;
  c->lim.memory_weight = c->core.memory_weight;
  if (st & CLI_PROGRESS) cli_progress_attach(&c->lim, &c->progress);
  if (st & CLI_INTERRUPT) cli_interrupt_attach(&c->lim);
  return EXIT_OK_;
}

int cli_command_run(const cli_cmd *cmd, int argc, char **argv)
{
  cli_ctx c;
  int rc;
  memset(&c, 0, sizeof c);
  c.cmd = cmd;
  if (cmd->opts_size && !(c.opts = calloc(1, cmd->opts_size))) {
    fprintf(stderr, "hetplan: error: out of memory\n");
    return EXIT_ERROR;
  }
  rc = prologue(&c, argc, argv);
  if (rc == CLI_DONE) rc = EXIT_OK_;
  else if (rc == EXIT_OK_) rc = cmd->run(&c);
  hp_coverage_destroy(&c.cov);
  hp_plan_destroy(&c.plan);
  hp_problem_destroy(&c.prob);
  free(c.opts);
  return rc;
}
