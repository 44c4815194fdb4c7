/* team.c -- the CLI's team of processes (hp_team.h) when it runs under mpirun: Open MPI's
 * one-sided operations hold the shared counters and the best time at rank 0 (passive
 * target: on one node, or over RDMA, no rank waits on another to claim an item; over
 * plain TCP it may: docs/distributed.md), collectives merge the figures and plans. Built with mpicc where Open MPI is (make MPI=0 leaves it out); a run not started
 * by mpirun, or by mpirun with one process, never initialises MPI and has no team.
 * docs/distributed.md. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "cli.h"

#ifdef HP_HAVE_MPI
#include <mpi.h>

typedef struct mpi_team {
  MPI_Win win;
  unsigned char *base;  /* rank 0: HP_TEAM_COUNTERS int64 counters, then the best time */
} mpi_team;

static mpi_team mt;
static hp_team team;
static int started;
static FILE *trace;     /* HETPLAN_TEAM_TRACE=DIR: DIR/rank-R.txt, a line per team call */
static double trace_t0;

/* One line per call: seconds since the start, the call, its argument and result. */
static void note(const char *what, long arg, double result)
{
  if (trace) fprintf(trace, "%.3f %s %ld %.9g\n", MPI_Wtime() - trace_t0, what, arg, result);
}

#define BEST_AT ((MPI_Aint)(HP_TEAM_COUNTERS * sizeof(int64_t)))

static long mpi_claim(void *ctx, int k)
{
  int64_t one = 1, got = 0;
  (void)ctx;
  MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, (MPI_Aint)k * (MPI_Aint)sizeof(int64_t), MPI_SUM,
                   mt.win);
  MPI_Win_flush(0, mt.win);
  note("claim", k, (double)got);
  return (long)got;
}

static double mpi_best(void *ctx, double mine)
{
  double got = INFINITY;
  (void)ctx;
  MPI_Fetch_and_op(&mine, &got, MPI_DOUBLE, 0, BEST_AT, MPI_MIN, mt.win);
  MPI_Win_flush(0, mt.win);
  return got < mine ? got : mine;
}

static int mpi_reduce(void *ctx, double *v, long n, hp_team_op op)
{
  MPI_Op o = op == HP_TEAM_MIN ? MPI_MIN : op == HP_TEAM_MAX ? MPI_MAX : MPI_SUM;
  (void)ctx;
  int rc;
  if (n > INT32_MAX) return -1;
  note("reduce-enter", n, 0);
  rc = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, o, MPI_COMM_WORLD) != MPI_SUCCESS;
  note("reduce-leave", n, 0);
  return rc;
}

static int mpi_gather(void *ctx, const void *mine, long n, void **all, long *len)
{
  int size = team.size, *cnt = NULL, *at = NULL, rc = -1;
  long me = n, total = 0;
  (void)ctx;
  *all = NULL;
  if (MPI_Allgather(&me, 1, MPI_LONG, len, 1, MPI_LONG, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
  cnt = calloc((size_t)size, sizeof *cnt);
  at = calloc((size_t)size, sizeof *at);
  for (int r = 0; r < size; r++) total += len[r];
  if (cnt && at && total < INT32_MAX && (*all = malloc((size_t)total + 1))) {
    for (int r = 0, off = 0; r < size; off += (int)len[r], r++) {
      cnt[r] = (int)len[r];
      at[r] = off;
    }
    rc = MPI_Allgatherv(mine, (int)n, MPI_BYTE, *all, cnt, at, MPI_BYTE, MPI_COMM_WORLD) !=
         MPI_SUCCESS;
  } else {
    /* out of memory, or 2 GiB or more in all (MPI's int counts): the others wait in the
     * collective; end the job with a message. What is gathered: plans, and a shared
     * pattern DP's frontiers of one stage (at most its 20 M points of 56 bytes) */
    fprintf(stderr, "hetplan: rank %d: out of memory exchanging the team's plans or frontiers (%ld bytes)\n",
            team.rank, total);
    MPI_Abort(MPI_COMM_WORLD, EXIT_ERROR);
  }
  free(cnt);
  free(at);
  return rc;
}

/* Whether mpirun (Open MPI, or a PMI launcher) started this process with others. */
static int launched_with_others(void)
{
  const char *v = getenv("OMPI_COMM_WORLD_SIZE");
  if (!v) v = getenv("PMI_SIZE");
  if (!v) v = getenv("PMIX_SIZE");
  return v && atoi(v) > 1;
}

int cli_team_start(int *argc, char ***argv)
{
  int rank = 0, size = 1;
  if (!launched_with_others()) return 0;
  if (MPI_Init(argc, argv) != MPI_SUCCESS) return -1;
  started = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (MPI_Win_allocate(rank == 0 ? BEST_AT + (MPI_Aint)sizeof(double) : 0, 1, MPI_INFO_NULL,
                       MPI_COMM_WORLD, &mt.base, &mt.win) != MPI_SUCCESS)
    return -1;
  if (rank == 0) {
    memset(mt.base, 0, (size_t)BEST_AT);
    double inf = INFINITY;
    memcpy(mt.base + BEST_AT, &inf, sizeof inf);
  }
  MPI_Barrier(MPI_COMM_WORLD);            /* the window is set before anyone reads it */
  MPI_Win_lock_all(0, mt.win);
  team = (hp_team){ rank, size, &mt, mpi_claim, mpi_best, mpi_reduce, mpi_gather };
  trace_t0 = MPI_Wtime();
  if (getenv("HETPLAN_TEAM_TRACE")) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.txt", getenv("HETPLAN_TEAM_TRACE"), rank);
    trace = fopen(path, "w");
  }
  return 0;
}

const hp_team *cli_team(void) { return started ? &team : NULL; }

void cli_team_end(void)
{
  if (!started) return;
  if (trace) fclose(trace);
  trace = NULL;
  MPI_Win_unlock_all(mt.win);
  MPI_Win_free(&mt.win);
  MPI_Finalize();
  started = 0;
}

#else   /* built without MPI: never a team */

int cli_team_start(int *argc, char ***argv)
{
  const char *v = getenv("OMPI_COMM_WORLD_SIZE");
  (void)argc;
  (void)argv;
  if (v && atoi(v) > 1) return -2;        /* started by mpirun, but cannot join it */
  return 0;
}

const hp_team *cli_team(void) { return NULL; }
void cli_team_end(void) {}

#endif
