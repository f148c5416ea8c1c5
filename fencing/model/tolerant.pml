/*
 * tolerant.pml -- Promela model of the data-loss-tolerant quorum
 * (redlock.WithDataLossTolerance(f), issue 16 section 1).
 *
 * One lock key K on M masters (2..5), quorum Q = floor((M + F) / 2) + 1 by
 * default. There is no quarantine, no detection of a loss and no counter
 * sync: every grant and every ok counts, exactly as redlock counts them with
 * WithDataLossTolerance(f) (votes all true). Any master may lose data at any
 * step, as often as the fault model (FAULT, below) allows. A loss is
 *   (a) a restart without persistence or a FLUSHALL: key and counter gone;
 *   (b) with FAILOVER, a rollback to an older snapshot or a failover to a
 *       lagging replica: the key gone or unchanged (without LOSSY also a stale
 *       key), the counter any value from 0 to its current one.
 *
 * Clients: as in fencing.pml (round 1 SET NX and read the counter, with
 * FASTPATH a raise to the proposal in the same step; Q grants; the fast path
 * when Q granting masters raised; otherwise max + 1 written back to the
 * granting masters, Q oks needed). Requests may be lost and clients may give
 * up (LOSSY).
 *
 * Fault models (-DFAULT=n). The *span* of a lease L runs from the first
 * request of its attempt until the attempt fails, or, if L is acquired,
 * until L has ended AND the next lease of K has been acquired.
 *   FAULT=1 (SPAN, the default and the one docs/safety.md states): at most F
 *           distinct masters lose data within any one span. A master may
 *           lose data any number of times.
 *   FAULT=2 (STATIC): masters 0 .. F-1 may lose data at any step, any number
 *           of times; the others never (a special case of SPAN).
 *   FAULT=3 (BETWEEN, the statement docs/safety.md used to make): at most F
 *           distinct masters lose data between one acquisition of K and the
 *           next (the count restarts at every acquisition): must fail for
 *           M = 4, F = 1 (two holders: one loss just before a lease is
 *           acquired, one just after, both of its keys).
 *   FAULT=4 (WINDOW): at most F distinct masters lose data while a lease's
 *           attempt or lease lives (first request to end), nothing between
 *           leases: must fail (tokens: every master loses its counter after
 *           one lease ended and before the next began).
 *
 * Properties (as in fencing.pml):
 *   P0 mutual exclusion: no two leases are HELD at once (checked when a lease
 *      becomes HELD)
 *   P1 token monotonicity: if lease L1 ended before lease L2 became HELD,
 *      tok[L2] > tok[L1]
 * P2 (the store) follows from P1 (docs/fencing-model.md), so the model has no
 * store.
 *
 *   spin -a tolerant.pml                         M = 3, F = 1, Q = 3, SPAN
 *   spin -a -DM=4 tolerant.pml                   M = 4, F = 1, Q = 3
 *   spin -a -DQ=2 tolerant.pml                   M = 3, Q = majority: must fail
 *   spin -a -DM=4 -DFAULT=3 tolerant.pml         fault model BETWEEN: must fail
 *
 * fencing/model/model_test.go runs the checks; docs/fencing-model.md
 * (section "The data-loss-tolerant quorum") gives the bounds and results.
 */

/* ---------------------------------------------------------------- bounds */

#ifndef M
#define M 3                     /* masters, 2 .. 5 */
#endif
#ifndef F
#define F 1                     /* masters that may lose data within one span */
#endif
#ifndef Q
#define Q ((M + F) / 2 + 1)     /* the tolerant quorum; -DQ=... overrides it */
#endif
#ifndef CLIENTS
#define CLIENTS 2
#endif
#ifndef ATTEMPTS
#define ATTEMPTS 1
#endif
#ifndef LOSSY
#define LOSSY 1                 /* lost requests; a client may give up despite Q oks */
#endif
#ifndef FAILOVER
#define FAILOVER 0              /* 1: losses of kind (b) too */
#endif
#ifndef FASTPATH
#define FASTPATH 1              /* round 1 carries a proposal; the fast path */
#endif
#ifndef FAULT
#define FAULT 1
#endif
#ifndef CHECK_P1
#define CHECK_P1 1              /* 0: do not assert P1 (to see P0 fail first) */
#endif
#define SPAN    1
#define STATIC  2
#define BETWEEN 3
#define WINDOW  4

#ifndef SYM
#if FAULT == STATIC
#define SYM 0
#else
#define SYM 1                   /* client 0 asks the masters in the order 0, 1, ..
                                   in round 1 of its first attempt: the masters are
                                   symmetric (the initial state, every choice of a
                                   master, the fault model and the properties treat
                                   them alike), so renaming the masters maps every
                                   execution to one where that order is 0, 1, ..:
                                   an exact reduction. Not with STATIC, which
                                   names masters 0 .. F-1. */
#endif
#endif
#if SYM && FAULT == STATIC
#error "SYM needs a fault model that treats the masters alike"
#endif

#define NL (CLIENTS * ATTEMPTS) /* lease ids 1..NL */

#if M < 2 || M > 5
#error "M must be 2 .. 5 (pick and CNT stop at 5 masters)"
#endif
#if NL > 6
#error "at most 6 leases (ALLOWED below)"
#endif
#if Q > M
#error "Q > M: no round could ever succeed"
#endif

#define FREE  0
#if LOSSY
#define STALE FREE              /* as in fencing.pml: with lost requests a stale key
                                   offers the same choices as a free one */
#else
#define STALE 255
#endif

#define UNUSED 0
#define ACQ    1
#define HELD   2
#define ENDED  3
#define FAILED 4

#define ALLM   ((1 << M) - 1)
#define BIT(i) (1 << (i))
#define MAX(a, b) ((a) > (b) -> (a) : (b))
#define CNT(s) (((s) & 1) + (((s) >> 1) & 1) + (((s) >> 2) & 1) + (((s) >> 3) & 1) + (((s) >> 4) & 1))

/* ---------------------------------------------------------------- state */

byte lock[M];                   /* FREE, STALE or the live lease owning K */
byte ctr[M];                    /* fencing counter */

byte st[NL + 1];
byte tok[NL + 1];
byte ndone;

/* the fault model's bookkeeping */
#if FAULT == SPAN || FAULT == WINDOW
byte open;                      /* leases whose span is open */
byte lost[NL + 1];              /* masters that lost data within L's span so far */
#endif
#if FAULT == BETWEEN
byte lostsince;                 /* masters that lost data since the last acquisition */
#endif

#if FAULT == SPAN || FAULT == WINDOW
#define SPANLOST(L) CNT(lost[L])
#else
#define SPANLOST(L) 0
#endif

/* ---------------------------------------------------------------- helpers */

inline pick(s, m) {
	if
	:: (s & 1) -> m = 0
	:: (s & 2) -> m = 1
	:: (s & 4) -> m = 2
	:: (s & 8) -> m = 3
	:: (s & 16) -> m = 4
	fi
}

/* m = the lowest master in the non-empty set s (SYM). */
inline lowest(s, m) {
	if
	:: (s & 1) -> m = 0
	:: (s & 3) == 2 -> m = 1
	:: (s & 7) == 4 -> m = 2
	:: (s & 15) == 8 -> m = 3
	:: (s & 31) == 16 -> m = 4
	fi
}

/* Lease L is over: its keys may expire at any moment (see fencing.pml). */
inline over(L, m) {
	for (m : 0 .. M - 1) {
		if
		:: lock[m] == L -> lock[m] = STALE
		:: else -> skip
		fi
	};
	m = 0
}

/* ALLOWED(m): master m may lose data now under the fault model. */
#if FAULT == SPAN || FAULT == WINDOW
#define OKL(L, m) (!(open & BIT(L)) || CNT(lost[L] | BIT(m)) <= F)
#if NL == 1
#define ALLOWED(m) (OKL(1, m))
#elif NL == 2
#define ALLOWED(m) (OKL(1, m) && OKL(2, m))
#elif NL == 3
#define ALLOWED(m) (OKL(1, m) && OKL(2, m) && OKL(3, m))
#elif NL == 4
#define ALLOWED(m) (OKL(1, m) && OKL(2, m) && OKL(3, m) && OKL(4, m))
#elif NL == 5
#define ALLOWED(m) (OKL(1, m) && OKL(2, m) && OKL(3, m) && OKL(4, m) && OKL(5, m))
#else
#define ALLOWED(m) (OKL(1, m) && OKL(2, m) && OKL(3, m) && OKL(4, m) && OKL(5, m) && OKL(6, m))
#endif
#elif FAULT == STATIC
#define ALLOWED(m) ((m) < F)
#elif FAULT == BETWEEN
#define ALLOWED(m) (CNT(lostsince | BIT(m)) <= F)
#else
#error "FAULT must be 1 .. 4"
#endif

/* ---------------------------------------------------------------- clients */

active [CLIENTS] proctype Client()
{
	byte a, L, m, todo, granted, n, t, i;
#if FASTPATH
	byte cache;             /* highest token this client has seen (its last
	                           token, the highest counter it read); 0: none */
	byte p;                 /* this attempt's proposal */
	byte raised;            /* granting masters that raised to p */
#endif

	for (a : 0 .. ATTEMPTS - 1) {
		d_step {
			L = _pid * ATTEMPTS + a + 1;
			st[L] = ACQ;
#if FAULT == SPAN || FAULT == WINDOW
			open = open | BIT(L);   /* the span starts with the first request */
			lost[L] = 0;
#endif
			todo = ALLM;
#if FASTPATH
			p = cache + 1
#endif
		}
#if FASTPATH
		if
		:: p > 1 -> p = 1       /* the cache evicted K */
		:: true -> skip
		fi;
#endif
		/* round 1 */
		do
		:: todo == 0 -> break
		:: else ->
			atomic {
#if SYM
				if
				:: _pid == 0 && a == 0 -> lowest(todo, m)
				:: else -> pick(todo, m)
				fi;
#else
				pick(todo, m);
#endif
				todo = todo & ~BIT(m);
				if
				:: lock[m] == FREE || lock[m] == STALE ->
					lock[m] = L;
					granted = granted | BIT(m);
					t = MAX(t, ctr[m]);
					printf("MSC: lease %d round 1: master %d grants, ctr %d\n", L, m, ctr[m]);
#if FASTPATH
					if
					:: ctr[m] < p ->
						ctr[m] = p;
						raised = raised | BIT(m);
						printf("MSC: lease %d round 1: master %d raises ctr to %d\n", L, m, p)
					:: else -> skip
					fi
#endif
#if LOSSY
				:: lock[m] == FREE || lock[m] == STALE -> skip      /* lost */
#if FASTPATH
				:: (lock[m] == FREE || lock[m] == STALE) && ctr[m] < p ->
					ctr[m] = p;     /* granted and raised, reply lost */
					printf("MSC: lease %d round 1: master %d raises ctr to %d, reply lost\n", L, m, p)
#endif
#else
				:: lock[m] == STALE -> skip     /* stale key not expired yet */
#endif
				:: else -> skip                 /* a live lease's key: denied */
				fi;
				m = 0
			}
		od;
#if FASTPATH
		cache = MAX(cache, t);
#endif
		if
		:: CNT(granted) < Q -> goto fail
		:: else -> skip
		fi;
#if FASTPATH
		if
		:: CNT(raised) >= Q ->
			t = p;          /* the fast path: p is on Q masters */
			printf("MSC: lease %d FAST PATH: token %d, no round 2\n", L, t);
#if LOSSY
			if
			:: goto held
			:: goto fail
			fi
#else
			goto held
#endif
		:: raised != 0 -> t = MAX(t, p) + 1
		:: raised == 0 -> t = t + 1
		fi;
		raised = 0;
#else
		t = t + 1;
#endif
		/* round 2, to the granting masters */
		todo = granted;
		do
		:: todo == 0 -> break
		:: else ->
			atomic {
				pick(todo, m);
				todo = todo & ~BIT(m);
				/* a master holding L's key has a counter below t: only
				   L's own grant raised it, and a loss only lowers it
				   (so redlock's "counter ahead" retry never runs here) */
				assert(lock[m] != L || ctr[m] < t);
				if
				:: lock[m] == L ->
					ctr[m] = t;
					n++;
					printf("MSC: lease %d round 2: master %d ok, ctr := %d\n", L, m, t)
#if LOSSY
				:: lock[m] == L -> skip         /* lost */
#endif
				:: else -> skip                 /* not-ok: the key is gone */
				fi;
				m = 0
			}
		od;
		if
		:: n < Q -> goto fail
#if LOSSY
		:: n >= Q -> goto fail  /* ok replies lost, or validity used up */
#endif
		:: n >= Q -> skip
		fi;
held:
		skip;
		d_step {
			st[L] = HELD;
			tok[L] = t;
#if FAULT == SPAN || FAULT == WINDOW
			printf("MSC: lease %d HELD with token %d; masters that lost data in its span: %d\n",
				L, t, SPANLOST(L));
#else
			printf("MSC: lease %d HELD with token %d\n", L, t);
#endif
#ifdef WITNESS_BUDGET
			assert(SPANLOST(L) < F);    /* must fail: some lease is acquired
			                               with F masters already lost in its span */
#endif
			for (i : 1 .. NL) {
				assert(i == L || st[i] != HELD);        /* P0 */
				if
				:: st[i] == ENDED ->
#if CHECK_P1
					assert(tok[L] > tok[i]);        /* P1 */
#endif
#if FAULT == SPAN
					open = open & ~BIT(i);  /* i's span ends: the next
					                           lease is acquired */
					lost[i] = 0;
#endif
					skip
				:: else -> skip
				fi
			};
#if FAULT == BETWEEN
			lostsince = 0;
#endif
			i = 0; todo = 0; granted = 0; n = 0; t = 0
#if FASTPATH
			; cache = MAX(cache, tok[L]); p = 0; raised = 0
#endif
		}
		d_step {
			st[L] = ENDED;
			over(L, m);
#if FAULT == WINDOW
			open = open & ~BIT(L); lost[L] = 0;
#endif
			printf("MSC: lease %d ENDED\n", L)
		}
		goto next;
fail:
		skip;
		d_step {
			st[L] = FAILED;
			over(L, m);
#if FAULT == SPAN || FAULT == WINDOW
			open = open & ~BIT(L); lost[L] = 0;
#endif
			printf("MSC: lease %d FAILED\n", L);
			todo = 0; granted = 0; n = 0; t = 0
#if FASTPATH
			; p = 0; raised = 0
#endif
		}
next:
		skip
	};
	ndone++
}

/* ---------------------------------------------------------------- data loss */

/* Record a loss on master m in every open span (or since the last acquisition). */
inline note(m, i) {
#if FAULT == SPAN || FAULT == WINDOW
	for (i : 1 .. NL) {
		if
		:: open & BIT(i) -> lost[i] = lost[i] | BIT(m)
		:: else -> skip
		fi
	};
	i = 0
#elif FAULT == BETWEEN
	lostsince = lostsince | BIT(m)
#else
	skip
#endif
}

#define LOSE(k) \
	:: atomic { ndone < CLIENTS && (lock[k] != FREE || ctr[k] != 0) && ALLOWED(k) -> \
		m = k; \
		if \
		:: lock[m] = FREE; ctr[m] = 0; \
			printf("MSC: master %d LOSES ALL DATA\n", m) \
		FAILOVER_OPTION \
		fi; \
		note(m, i); \
		m = 0 }

#if FAILOVER
#if LOSSY
#define FAILOVER_OPTION \
		:: if :: lock[m] = FREE :: skip fi; \
			do :: ctr[m] > 0 -> ctr[m]-- :: break od; \
			printf("MSC: master %d ROLLS BACK: key %d, ctr %d\n", m, lock[m], ctr[m])
#else
#define FAILOVER_OPTION \
		:: if :: lock[m] = FREE :: lock[m] = STALE :: skip fi; \
			do :: ctr[m] > 0 -> ctr[m]-- :: break od; \
			printf("MSC: master %d ROLLS BACK: key %d, ctr %d\n", m, lock[m], ctr[m])
#endif
#else
#define FAILOVER_OPTION
#endif

/*
 * Loss: at any step, while a client is still running, any master the fault
 * model allows loses data; again and again. A master with nothing to lose
 * (no key, counter 0) does not "lose" it: that step would change nothing but
 * use up the fault budget, which only removes behaviours (an exact reduction).
 */
active proctype Loss()
{
	byte m, i;
end:
	do
	LOSE(0)
	LOSE(1)
#if M > 2
	LOSE(2)
#endif
#if M > 3
	LOSE(3)
#endif
#if M > 4
	LOSE(4)
#endif
	:: ndone == CLIENTS -> break    /* the clients are done */
	od
}
