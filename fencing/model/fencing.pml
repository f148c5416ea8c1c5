/*
 * fencing.pml -- Promela model of the quorumlock fencing-token protocol.
 *
 * One lock key K on M = 3 masters, quorum Q = 2. CLIENTS client processes
 * each make ATTEMPTS acquisition attempts (a fresh lease id per attempt).
 * Leases end at arbitrary times, keys of over leases expire at arbitrary
 * times, at most one master restarts (and is quarantined), requests may be
 * lost and clients may give up (LOSSY), and every lease that was HELD may send
 * up to WRITES writes to a fenced store, also after it ended (a stale holder).
 *
 * Variants, selected with cpp macros (spin passes -D on to the preprocessor):
 *
 *   spin -a fencing.pml                           sound protocol, 2 clients x 2 attempts
 *   spin -a -DCLIENTS=3 -DATTEMPTS=1 fencing.pml  sound protocol, 3 clients x 1 attempt
 *   spin -a -DNAIVE fencing.pml                   naive SET NX + INCR protocol: must fail
 *
 * Other macros: WRITES, LOSSY, RESTART, CHECK_P1 (bounds section below) and
 * INTERLEAVED (see Writer). fencing/model/model_test.go runs the checks.
 *
 * Properties (assertions):
 *   P1 token monotonicity: if lease L1 ended before lease L2 became HELD,
 *      then tok[L2] > tok[L1]                        (checked when L2 becomes HELD)
 *   P2 fencing: the store never accepts a write of L1 after it accepted a
 *      write of some L2 such that L1 ended before L2 became HELD
 *                                                    (checked on every accepted write)
 *   P0 mutual exclusion (extra): no two leases are HELD at once
 *                                                    (checked when a lease becomes HELD)
 *
 * docs/fencing-model.md explains the bounds, the reductions and what the
 * model does not cover.
 */

/* ---------------------------------------------------------------- bounds */

#define M 3                     /* masters (pick() below hard-codes 3) */
#define Q 2                     /* quorum: a majority of M */
#ifndef CLIENTS
#define CLIENTS 2               /* concurrent client processes */
#endif
#ifndef ATTEMPTS
#define ATTEMPTS 2              /* acquisition attempts per client */
#endif
#ifndef WRITES
#define WRITES 2                /* writes each HELD lease may send to the store */
#endif
#ifndef LOSSY
#define LOSSY 1                 /* 1: requests of both rounds may be lost, and a client
                                   may give up despite Q oks (lost ok replies, or its
                                   validity is used up); lost grant replies are covered
                                   by lost requests, see docs/fencing-model.md */
#endif
#ifndef RESTART
#define RESTART 1               /* 1: at most one master restart; 0: none */
#endif
#ifndef CHECK_P1
#define CHECK_P1 1              /* 0: do not assert P1 (to see P2 fail in the naive run) */
#endif
#define NL (CLIENTS * ATTEMPTS) /* lease ids are 1..NL; 0 means "no lease" */

#if M != 3
#error "pick() and the restart's counter read hard-code M = 3"
#endif
#if NL > 8
#error "at most 8 leases: the write options below stop at 8"
#endif

/* lock[m] values besides a live lease id */
#define FREE  0                 /* key absent on the master */
#if LOSSY
#define STALE FREE              /* with lost requests a free key and a stale key offer
                                   the same choices (grant, or deny = lost), so the
                                   model does not tell them apart */
#else
#define STALE 255               /* key of a lease that is over (ENDED or FAILED); it
                                   may expire at any moment, see round 1 */
#endif

/* st[L]: status of lease L (= of the attempt that created it) */
#define UNUSED 0                /* attempt not started yet */
#define ACQ    1                /* attempt in progress (round 1 or round 2) */
#define HELD   2                /* acquired: holder owns K with token tok[L] */
#define ENDED  3                /* was HELD; validity ran out or it was released */
#define FAILED 4                /* attempt failed (or was abandoned) */

#define ALLM   7                /* bit set of all masters */
#define BIT(i) (1 << (i))
#define MAX(a, b) ((a) > (b) -> (a) : (b))

/* ---------------------------------------------------------------- state */

/* masters */
byte lock[M];                   /* FREE, STALE or the id of the live lease owning K */
byte ctr[M];                    /* fencing counter: never expires, only raised
                                   (a restart zeroes it and quarantines the master) */
bool quar[M];                   /* restarted and not yet re-synchronised */

/* leases (index 0 unused) */
byte  st[NL + 1];               /* UNUSED .. FAILED */
byte  tok[NL + 1];              /* token of a lease, set when it becomes HELD */
short eb[NL + 1];               /* eb[L2] has bit L1 <=> L1 had ENDED when L2 became
                                   HELD ("L1 ended before L2 was acquired") */
short live;                     /* bit L set while lease L is ACQ or HELD */
byte  ndone;                    /* clients that have finished all their attempts */

/* the fenced store */
byte  H;                        /* highest accepted token (0: none yet) */
byte  holder;                   /* lease that presented H */
short fenced;                   /* OR of eb[L2] over all L2 with an accepted write: bit L1
                                   set <=> no write of L1 may be accepted any more */
byte  wr[NL + 1];               /* writes sent so far by each lease */

/* ---------------------------------------------------------------- helpers */

/* Nondeterministically pick a master m from the non-empty bit set s. */
inline pick(s, m) {
	if
	:: (s & 1) -> m = 0
	:: (s & 2) -> m = 1
	:: (s & 4) -> m = 2
	fi
}

/*
 * Lease L is over (ENDED or FAILED). From now on its keys may expire at any
 * time (timing assumption, see the docs); release R, a DEL of the key where it
 * is still L's, is one such expiry. Nobody can tell L's key from the key of any
 * other over lease, so all of them become STALE: a round-1 SET NX on a STALE
 * key nondeterministically finds it expired or not.
 */
inline over(L, m) {
	for (m : 0 .. M - 1) {
		if
		:: lock[m] == L -> lock[m] = STALE
		:: else -> skip
		fi
	};
	m = 0;
	live = live & ~BIT(L)
}

/* ---------------------------------------------------------------- clients */

/*
 * Client: ATTEMPTS acquisition attempts one after the other, lease id
 * L = _pid * ATTEMPTS + attempt + 1. Round 1 and round 2 talk to the masters
 * one at a time, in any order, each master step atomic; every other process
 * may interleave between two master steps. After a successful attempt the
 * client holds K until its lease ends (validity ran out, or it released K),
 * which happens at an arbitrary later moment; then it goes on with its next
 * attempt. Its writes to the store are made by Writer.
 */
active [CLIENTS] proctype Client()
{
	byte a;                 /* attempt number */
	byte L;                 /* lease id of the current attempt */
	byte m;                 /* master of the current step */
	byte todo;              /* masters still to contact in this round */
	byte granted;           /* masters known to have granted in round 1 */
	byte n;                 /* grants (round 1), then oks (round 2) */
	byte t;                 /* max counter replied in round 1, then the token */

	for (a : 0 .. ATTEMPTS - 1) {
		/* start the attempt with a fresh lease id */
		d_step {
			L = _pid * ATTEMPTS + a + 1;
			st[L] = ACQ;
			live = live | BIT(L);
			todo = ALLM
		}

		/*
		 * 1. Round 1, one master at a time in any order.
		 *    sound: SET K L NX; a grant replies ctr[m].
		 *    naive: SET K L NX + INCR ctr[m] in one script; a grant
		 *           replies the INCR result.
		 */
		do
		:: todo == 0 -> break
		:: else ->
			atomic {
				pick(todo, m);
				todo = todo & ~BIT(m);
				if
				:: !quar[m] && (lock[m] == FREE || lock[m] == STALE) ->
					/* key absent (or a stale key has expired): grant */
					lock[m] = L;
#ifdef NAIVE
					ctr[m]++;
#endif
					granted = granted | BIT(m);
					n++;
					t = MAX(t, ctr[m]);
					printf("MSC: lease %d round 1: master %d grants, ctr %d\n", L, m, ctr[m])
#if LOSSY
				:: !quar[m] && (lock[m] == FREE || lock[m] == STALE) ->
					skip                            /* request lost (or, for a stale
					                                   key: not expired yet) */
#else
				:: !quar[m] && lock[m] == STALE ->
					skip                            /* stale key not expired yet: denied */
#endif
				:: quar[m] || (lock[m] != FREE && lock[m] != STALE) ->
					skip                            /* quarantined (never counts), or
					                                   the key of a live lease: denied */
				fi;
				m = 0
			}
		od;

		/* 2. fewer than Q grants: the attempt fails */
		if
		:: n < Q -> goto fail
		:: else -> skip
		fi;

#ifndef NAIVE
		/* 3. token t = max(counters replied by the granting masters) + 1 */
		d_step { t = t + 1; todo = granted; n = 0 }

		/*
		 * 4. Round 2, to each granting master in any order, atomic per
		 *    master: if lock[m] == L and ctr[m] < t then ctr[m] = t, ok.
		 */
		do
		:: todo == 0 -> break
		:: else ->
			atomic {
				pick(todo, m);
				todo = todo & ~BIT(m);
				if
				:: lock[m] == L && ctr[m] < t ->
					ctr[m] = t;
					n++;
					printf("MSC: lease %d round 2: master %d ok, ctr := %d\n", L, m, t)
#if LOSSY
				:: lock[m] == L && ctr[m] < t ->
					skip                            /* request lost */
#endif
				:: !(lock[m] == L && ctr[m] < t) ->
					skip                            /* not-ok (master restarted) */
				fi;
				m = 0
			}
		od;

		/* 5. fewer than Q oks: the attempt fails */
		if
		:: n < Q -> goto fail
#if LOSSY
		:: n >= Q -> goto fail          /* ok replies lost (or validity used
		                                   up): the client gives up anyway */
#endif
		:: n >= Q -> skip
		fi;
#endif

		/*
		 * HELD with token t. Record which leases had already ended (the
		 * happened-before relation) and check P1 against each of them.
		 */
		d_step {
			st[L] = HELD;
			tok[L] = t;
			printf("MSC: lease %d HELD with token %d; ctr = %d %d %d\n",
				L, t, ctr[0], ctr[1], ctr[2]);
			for (m : 1 .. NL) {
				assert(m == L || st[m] != HELD);    /* P0: mutual exclusion */
				if
				:: st[m] == ENDED ->
					eb[L] = eb[L] | BIT(m);
#if CHECK_P1
					assert(tok[L] > tok[m]);        /* P1: token monotonicity */
#endif
					skip
				:: else -> skip
				fi
			};
			m = 0; todo = 0; granted = 0; n = 0; t = 0
		}

		/* The lease ends at some later moment: validity ran out or released. */
		d_step {
			st[L] = ENDED;
			over(L, m);
			printf("MSC: lease %d ENDED\n", L)
		}
		goto next;

fail:
		/* The attempt fails (release R: see over()). */
		skip;
		d_step {
			st[L] = FAILED;
			over(L, m);
			printf("MSC: lease %d FAILED\n", L);
			todo = 0; granted = 0; n = 0; t = 0
		}
next:
		skip
	};
	ndone++
}

/* ---------------------------------------------------------------- restart */

/*
 * Restart: at most one master restart, on any master, at any moment (or
 * never: the process may stay at end0). The master loses its key and its
 * counter and is quarantined. The quarantine ends only once every lease that
 * was ACQ or HELD at restart time is over; then the master reads the counters
 * of the Q other masters (M = 3: both others) one at a time, in any order,
 * with other processes interleaving, raises its counter to their max and
 * leaves quarantine.
 */
#if RESTART
active proctype Restart()
{
	byte m;                 /* the restarted master */
	byte others;            /* masters whose counter is still to be read */
	byte o;                 /* the master read in this step */
	byte r;                 /* max counter read so far */
	short pend;             /* leases ACQ or HELD at restart time */

end0:
	atomic {
		pick(ALLM, m);
		lock[m] = FREE;
		ctr[m] = 0;
		quar[m] = true;
		pend = live;
		others = ALLM & ~BIT(m);
		printf("MSC: master %d RESTARTS; leases ACQ/HELD: mask %d\n", m, pend)
	}
end1:
	(pend & live) == 0;     /* wait until every pending lease is over */
	pend = 0;
	do
	:: others == 0 -> break
	:: else ->
		atomic {
			pick(others, o);
			others = others & ~BIT(o);
			r = MAX(r, ctr[o]);
			o = 0
		}
	od;
	atomic {
		ctr[m] = MAX(ctr[m], r);
		quar[m] = false;
		printf("MSC: master %d leaves quarantine with ctr %d\n", m, ctr[m]);
		r = 0
	}
}
#endif

/* ---------------------------------------------------------------- store */

/*
 * One write of lease i with its token, allowed once i was HELD, also after it
 * ended (a paused or partitioned holder that does not know). Accept rule of
 * fencing.Accepts: tok > H, or tok == H from the same holder. P2 is checked on
 * every accepted write.
 */
#define WRITE(i) \
	:: atomic { (st[i] == HELD || st[i] == ENDED) && wr[i] < WRITES -> \
		wr[i]++; \
		if \
		:: tok[i] > H || (tok[i] == H && holder == i) -> \
			printf("MSC: store ACCEPTS write of lease %d, token %d (H was %d)\n", \
				i, tok[i], H); \
			assert(!(fenced & BIT(i)));     /* P2: no write of a fenced lease */ \
			H = tok[i]; \
			holder = i; \
			fenced = fenced | eb[i] \
		:: else -> \
			printf("MSC: store rejects write of lease %d, token %d (H %d)\n", \
				i, tok[i], H) \
		fi }

/*
 * Writer: the writes of every lease that was HELD, up to WRITES each, in any
 * order. A write reads only tok[i] and eb[i], frozen when i became HELD, and
 * the store, which only writes touch; so writes commute with every protocol
 * step, and delaying them all until the clients are done yields exactly the
 * same store histories (every relative order of the writes is still
 * explored). This is a sound and complete reduction; -DINTERLEAVED turns it
 * off and interleaves the writes with everything else.
 */
active proctype Writer()
{
#ifndef INTERLEAVED
end0:
	ndone == CLIENTS;
	atomic {
#endif
end1:
		do
		WRITE(1)
		WRITE(2)
#if NL >= 3
		WRITE(3)
#endif
#if NL >= 4
		WRITE(4)
#endif
#if NL >= 5
		WRITE(5)
#endif
#if NL >= 6
		WRITE(6)
#endif
#if NL >= 7
		WRITE(7)
#endif
#if NL >= 8
		WRITE(8)
#endif
#ifndef INTERLEAVED
		:: else -> break
#endif
		od
#ifndef INTERLEAVED
	}
#endif
}
