/* test_search_team.c -- the team a search runs in (solvers/team_solo.c, hp_team.h): the
 * solo team's operations (claims 0, 1, 2, ... per counter, the best time a running
 * minimum, merges that leave everything as it is); a team of one is the solo team; and
 * the search driver (solvers/search_driver.c) gives the plain result under a team handed
 * in by the caller: one of size 1, and a fake in-process team of two whose other member
 * takes no item (every claim, merge and share of the team path, the result unchanged); and
 * how members take turns in a run of timed items (hp__team_turns). */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"

TEST(solo_team_claims_count_per_counter_best_is_the_running_minimum_merges_do_nothing)
{
  hp_team_solo solo;
  const hp_team *t = hp__team_solo(&solo);
  double v[3] = { 1.5, -2, INFINITY }, best[] = { 5, INFINITY, 7, 3, 4 }, want[] = { 5, 5, 5, 3, 3 };
  const char bytes[] = "plan";
  void *all = NULL;
  long len[1] = { -1 };
  CHECK_INT(t->rank, 0);
  CHECK_INT(t->size, 1);
  for (long k = 0; k < 3; k++) CHECK_INT(t->claim(t->ctx, 0), k);
  CHECK_INT(t->claim(t->ctx, 3), 0);                 /* each counter on its own */
  CHECK_INT(t->claim(t->ctx, 0), 3);
  CHECK_INT(t->claim(t->ctx, HP_TEAM_COUNTERS - 1), 0);
  CHECK_INT(t->claim(t->ctx, HP_TEAM_COUNTERS - 1), 1);
  for (int i = 0; i < 5; i++) CHECK(t->best(t->ctx, best[i]) == want[i]);
  for (int op = HP_TEAM_MIN; op <= HP_TEAM_SUM; op++) {
    CHECK_INT(t->reduce(t->ctx, v, 3, (hp_team_op)op), 0);
    CHECK(v[0] == 1.5 && v[1] == -2 && v[2] == INFINITY);
  }
  CHECK_INT(t->gather(t->ctx, bytes, (long)sizeof bytes, &all, len), 0);   /* its own bytes */
  CHECK_INT(len[0], sizeof bytes);
  CHECK(all && !memcmp(all, bytes, sizeof bytes));
  free(all);
  CHECK_INT(t->gather(t->ctx, NULL, 0, &all, len), 0);
  CHECK_INT(len[0], 0);
  free(all);
  /* a fresh solo team starts its counters again */
  t = hp__team_solo(&solo);
  CHECK_INT(t->claim(t->ctx, 0), 0);
}

/* A fake in-process team of `size` whose members other than this one (rank 0) take no
 * item: claims from its own counters, the best time a minimum, reductions that combine
 * with the others' neutral figures (so leave v as it is), a gather whose other members
 * send nothing. Counts its calls. */
typedef struct fake_team {
  hp_team team;
  long next[HP_TEAM_COUNTERS];
  double best;
  int calls;
} fake_team;

static long fake_claim(void *ctx, int k) { fake_team *f = ctx; f->calls++; return f->next[k]++; }

static double fake_best(void *ctx, double mine)
{
  fake_team *f = ctx;
  f->calls++;
  if (mine < f->best) f->best = mine;
  return f->best;
}

static int fake_reduce(void *ctx, double *v, long n, hp_team_op op)
{
  (void)v; (void)n; (void)op;
  ((fake_team *)ctx)->calls++;
  return 0;
}

static int fake_gather(void *ctx, const void *mine, long n, void **all, long *len)
{
  fake_team *f = ctx;
  f->calls++;
  if (!(*all = malloc((size_t)n + 1))) return -1;
  if (n > 0) memcpy(*all, mine, (size_t)n);
  for (int r = 0; r < f->team.size; r++) len[r] = r == 0 ? n : 0;
  return 0;
}

static void fake_init(fake_team *f, int size)
{
  memset(f, 0, sizeof *f);
  f->best = INFINITY;
  f->team = (hp_team){ 0, size, f, fake_claim, fake_best, fake_reduce, fake_gather };
}

/* The turns of a run of timed items (the placement descents): hand-computed windows, and
 * every item taken by exactly one member, for teams of 1 to 4 and runs of 0 to 7 items. */
TEST(team_turns_give_member_0_the_first_item_its_single_share_and_the_others_the_rest)
{
  int first, step;
  CHECK(hp__team_turns(0, 1, 5, 30, &first, &step) == 30);        /* alone: all, in turn */
  CHECK_INT(first, 0);
  CHECK_INT(step, 1);
  CHECK(hp__team_turns(0, 2, 5, 30, &first, &step) == 15);        /* the first alone */
  CHECK_INT(first, 0);
  CHECK_INT(step, 5);
  CHECK(hp__team_turns(0, 2, 1, 30, &first, &step) == 30);        /* the only one: all */
  CHECK(hp__team_turns(1, 2, 5, 30, &first, &step) == 15);        /* the rest, half */
  CHECK_INT(first, 1);
  CHECK_INT(step, 1);
  CHECK(hp__team_turns(2, 3, 5, 30, &first, &step) == 7.5);       /* half, split by two */
  CHECK_INT(first, 2);
  CHECK_INT(step, 2);
  for (int size = 1; size <= 4; size++)
    for (int n = 0; n <= 7; n++) {
      int taken[8] = {0};
      double most = 0;
      for (int r = 0; r < size; r++) {
        double w = hp__team_turns(r, size, n, 30, &first, &step);
        CHECK(step >= 1);
        if (w > most) most = w;
        for (int q = first; q < n; q += step) taken[q]++;
      }
      for (int q = 0; q < n; q++) CHECK_INT(taken[q], 1);
      /* no member longer than one process; a team of several in half its time, or all of
       * it where one item is the whole run */
      CHECK(most <= 30);
      if (size > 1 && n > 1) CHECK(most <= 15);
    }
}

TEST(a_team_of_one_is_the_solo_team)
{
  hp_team_solo solo;
  fake_team one, two;
  fake_init(&one, 1);
  fake_init(&two, 2);
  CHECK(hp__team_pick(NULL, &solo) == &solo.team);
  CHECK(hp__team_pick(&one.team, &solo) == &solo.team);
  CHECK(hp__team_pick(&two.team, &solo) == &two.team);
}

/* Whether two results are the same: status, plan, figures, space and work. */
static int same_result(const hp_result *a, const hp_result *b)
{
  if (a->status != b->status || a->objective != b->objective || a->bound != b->bound ||
      a->space != b->space || a->stopped != b->stopped || a->work != b->work ||
      strcmp(a->space_note, b->space_note) || !a->plan != !b->plan)
    return 0;
  return !a->plan || hp_plan_compare(a->plan, b->plan) == 0;
}

/* The search of `kind` on p: plain, and under a fake team of `size` handed to the driver
 * (size 1 through lim->team, as a caller would); the same result, and the fake called
 * exactly when it has several members. */
static int same_under_a_team(const hp_problem *p, const hp_search_kind *kind, int size)
{
  hp_limits lim;
  hp_result plain, teamed;
  hp_diag d = {0};
  fake_team f;
  int ok;
  hp_limits_init(&lim);
  lim.time_limit = 60;
  fake_init(&f, size);
  hp_result_init(&plain);
  hp_result_init(&teamed);
  ok = hp__search(p, &lim, NULL, kind, &plain, &d) == HP_OK;
  if (size == 1) {
    lim.team = &f.team;
    ok = ok && hp__search(p, &lim, lim.team, kind, &teamed, &d) == HP_OK && f.calls == 0;
  } else {
    ok = ok && hp__search(p, &lim, &f.team, kind, &teamed, &d) == HP_OK && f.calls > 0;
  }
  if (!ok || !same_result(&plain, &teamed))
    fprintf(stderr, "  %s, team of %d: %s; plain %.9g bound %.9g work %ld, team %.9g bound %.9g "
            "work %ld (%d calls)\n", kind->name, size, d.msg, plain.objective, plain.bound,
            plain.work, teamed.objective, teamed.bound, teamed.work, f.calls);
  ok = ok && same_result(&plain, &teamed);
  hp_result_release(&plain);
  hp_result_release(&teamed);
  return ok;
}

TEST(search_under_a_team_of_one_or_with_an_idle_member_is_the_plain_search)
{
  hp_search_kind kinds[3] = { { "DP", NULL } };
  int n_kinds = 1;
  hp_problem *tiny = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
#ifdef HP_HAVE_GLPK
  kinds[n_kinds++] = (hp_search_kind){ "GLPK", hp__glpk_solve_mip };
#endif
#ifdef HP_HAVE_CBC
  kinds[n_kinds++] = (hp_search_kind){ "CBC", hp__cbc_solve_mip };
#endif
  for (int k = 0; k < n_kinds; k++)
    for (int size = 1; size <= 2; size++) CHECK(same_under_a_team(tiny, &kinds[k], size));
  hp_problem_destroy(&tiny);
  for (unsigned long seed = 301; seed < 301 + (unsigned long)harness_count(4); seed++) {
    char what[256];
    hp_problem *p = ri_problem(seed, what, sizeof what);
    for (int k = 0; k < n_kinds; k++)
      for (int size = 1; size <= 2; size++) {
        int ok = same_under_a_team(p, &kinds[k], size);
        if (!ok) fprintf(stderr, "  %s\n", what);
        CHECK(ok);
      }
    hp_problem_destroy(&p);
  }
}
