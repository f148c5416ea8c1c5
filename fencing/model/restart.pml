/*
 * restart.pml -- Promela model of the default mode's restart rules (q = a
 * majority, certified masters: docs/safety.md, "The default: a majority with
 * certified masters"; issue 16 section 2).
 *
 * One lock key K on M masters (3 or 5), Q = a majority. Unlike fencing.pml,
 * nothing here is told that a master lost data: every client judges every
 * grant by what the master holds and what it is, exactly as rule V does.
 *
 * A master has
 *   a process:  rid (its run_id) and repl (its master_replid), small integers;
 *               each loss that changes one draws the next value, so a value
 *               never comes back;
 *   data:       lock (K's owner), ctr (K's fencing counter), inc (the
 *               incarnation, quorumlock:incarnation), cert (the certificate:
 *               the lineage it names, 0 = none) with corg (its origin: 0 a
 *               sync, s > 0 the scratch s), guard (the scratch guard: the
 *               lineage it names) with gsid (its scratch).
 * Its lineage is LIN = (rid, repl, inc), packed into one byte. Everything in
 * "data" is what a snapshot or a replica copies; run and repl are not.
 *
 * Losses (Loss, nondeterministic, at any step; LOSSES of them at most, and
 * within fault model F: fewer than Q masters damaged at once, a master being
 * damaged from a loss until a (sound) certification):
 *   EMPTY     restart without persistence: new run and repl, data gone
 *   FLUSH     FLUSHALL: data gone (the incarnation too), run and repl kept
 *   ROLLBACK  restart from an older snapshot: new run and repl, the data of
 *             the snapshot (its certificate and incarnation included)
 *   FAILBACK  a full resync from a lagging copy (a failback, or a promoted
 *             lagging replica in the same process): run kept, new repl, the
 *             data of the copy (certificate and incarnation included)
 *   KEEP      (not a loss) a restart that kept every write (appendfsync
 *             always): new run and repl, data kept; not damaged
 * The older copy is the master's snapshot: the initial data, or (SNAPS) its
 * data at any later step. A key in a snapshot whose lease is over by the time
 * it comes back is an expired key (FREE).
 *
 * Clients make ATTEMPTS two-round acquisitions each (no fast path):
 *   round 1   SET K NX, the counter and the certificate read in one atomic
 *             step; the grant counts by itself only if the certificate names
 *             the master's lineage at that step (rule V); the round succeeds
 *             with Q counted grants, or if every master granted (rule A)
 *   round 2   max + 1 written back to the granting masters (ok only where
 *             K is still the lease's and the counter is below the token; no
 *             "counter ahead" retry); Q oks counted by rule V, or oks from
 *             every master
 * Requests may be lost and clients may give up (LOSSY).
 *
 * A Certifier makes NACT certification actions (or stops):
 *   S   (SCRATCH, M = 3 only: c = 3 = M, every master a member; at most NS
 *       scratches, one at a time) each master's lineage read (an incarnation
 *       made where there is none) and its guard written in the same step
 *       (guard.lua: only in the lineage read, NX); then, in one step, every
 *       member checked (that guard, that lineage, no certificate) and every
 *       counter raised to the maximum; then the certifications, each applied
 *       at once or left in flight and delivered at any later step, or never
 *       (the late write of case 3). certify.lua: only if the guard is still
 *       there and names the master's lineage.
 *   SC  a master whose guard names its lineage is certified once a
 *       certificate of the same scratch is seen on another master.
 *   Y   an uncertified master is synced once every lease that was live at
 *       any of its losses since its last certification is over (rule Q,
 *       abstracted: the lambda sets and the clock give the Go client that
 *       wait); its lineage read; then, in one step, the sources: (a) any
 *       other masters, counted only if certified in that step, at least
 *       M - Q + 1 of them, or (b) every other master, any state; then the
 *       counter raised and the master certified, only if its lineage is
 *       still the one read (the sync guard).
 *
 * Properties:
 *   P0 mutual exclusion: no two leases HELD at once
 *   P1 token monotonicity: if L1 ended before L2 became HELD, tok[L2] > tok[L1]
 *
 * The old shortcuts, one -D each (each must fail, issue 16 section 2):
 *   BROKEN_RUNID_IDENTITY      a certificate counts if it names the master's
 *                              run_id (a marker replication copies): case 1
 *   BROKEN_CONFIG_DURABILITY   a restart is forgiven when the new process is
 *                              configured durable (appendfsync always now):
 *                              case 2
 *   BROKEN_UNGUARDED_BOOTSTRAP the scratch's certification is an unguarded
 *                              SET NX of the incarnation and certificate it
 *                              read: case 3
 *   BROKEN_STALE_SOURCE        a sync source is judged by a probe made when the
 *                              sync started, not with its read (M = 5): case 4
 * Case 5 (each client's Lambda its own longest TTL) is fencing.pml's
 * BROKEN_OWN_LAMBDA. Two mutations of the sound rules, which must fail too:
 *   MUTANT_NO_LINEAGE          rule V counts any certificate (no comparison)
 *   MUTANT_UNCERTIFIED_SOURCE  rule Y (a) counts a source without its
 *                              certificate
 *
 * fencing/model/model_test.go runs the checks; docs/fencing-model.md
 * (section "The restart rules") gives the bounds, results and what is not
 * covered.
 */

/* ---------------------------------------------------------------- bounds */

#ifndef M
#define M 3                     /* masters: 3 or 5 */
#endif
#define Q (M / 2 + 1)           /* a majority */
#ifndef CLIENTS
#define CLIENTS 2
#endif
#ifndef ATTEMPTS
#define ATTEMPTS 1
#endif
#ifndef LOSSY
#define LOSSY 1                 /* lost requests; a client may give up despite Q oks */
#endif
#ifndef LOSSES
#define LOSSES 2                /* loss (and KEEP) events in a run */
#endif
#ifndef SNAPS
#define SNAPS 1                 /* snapshots taken after the start (besides the initial data) */
#endif
#ifndef EMPTY
#define EMPTY 1
#endif
#ifndef FLUSH
#define FLUSH 1
#endif
#ifndef ROLLBACK
#define ROLLBACK 1
#endif
#ifndef FAILBACK
#define FAILBACK 1
#endif
#ifndef KEEP
#define KEEP 1
#endif
#ifndef FRESH
#define FRESH 1                 /* 1: masters start empty, never certified (the scratch
                                   certifies them); 0: they start certified (lineage
                                   1 1 1, counter 0, nothing else) */
#endif
#ifndef SCRATCH
#define SCRATCH FRESH           /* the certifier may scratch (rules S, SC) */
#endif
#ifndef NACT
#define NACT 2                  /* certification actions of the certifier */
#endif
#ifndef SYM
#define SYM 1                   /* client 0 asks the masters in the order 0, 1, ..
                                   in round 1 of its first attempt: the masters are
                                   symmetric (the initial state, every choice of a
                                   master, F and the properties treat them alike),
                                   so renaming them maps every execution to one with
                                   that order: an exact reduction (as in tolerant.pml) */
#endif

#define NL (CLIENTS * ATTEMPTS) /* lease ids 1..NL */
#define NS 2                    /* distinct scratches (ids 1..NS) */

#if M != 3 && M != 5
#error "M must be 3 or 5"
#endif
#if SCRATCH && M != 3
#error "the scratch is modelled for M = 3 (every master a member)"
#endif
#if NL > 6
#error "at most 6 leases"
#endif
#if LOSSES > 4
#error "run and repl must stay below 6 (LIN packs them in base 6)"
#endif

/*
 * CASE4_SCRIPT: a restricted configuration for case 4 (BROKEN_STALE_SOURCE)
 * and its sound twin. Every restriction only disables branches of the model
 * with LOSSY = 1, so each of its executions is one of the model's (a
 * counterexample here is one of the model) and only the interleavings stay
 * nondeterministic. One client makes two attempts: lease 1 (A) is cut off from
 * masters 3 and 4 (its requests there lost), lease 2 (B) from master 2; every
 * other request and reply arrives, and a client gives up only without a
 * quorum of oks. The losses: master 0 flushed, master 1 restarted from its
 * older snapshot (the initial data). The sync is of master 0, and master 2 is
 * unreachable to it.
 */
#ifdef CASE4_SCRIPT
#if M != 5 || !LOSSY || FRESH || CLIENTS != 1 || ATTEMPTS != 2
#error "CASE4_SCRIPT needs M = 5, LOSSY = 1, FRESH = 0, CLIENTS = 1, ATTEMPTS = 2"
#endif
#define CUT(L, m)     (((L) == 1 && (m) >= 3) || ((L) == 2 && (m) == 2))
#define LOST1(L, m)   CUT(L, m)
#define LOSE2         0
#define GIVEUP        (nc < Q && n < M)
#define LOSABLE(k)    ((k) <= 1)
#define FLUSHABLE(m)  ((m) == 0)
#define ROLLABLE(m)   ((m) == 1)
#define SYNCED        BIT(0)
#define REACHABLE(m)  ((m) != 2)
#else
#define CUT(L, m)     0    /* lease L's requests to master m all lost */
#define LOST1(L, m)   1    /* a round-1 request of lease L to m may be lost */
#define LOSE2         1    /* a round-2 request may be lost */
#define GIVEUP        1    /* a client may give up despite Q oks */
#define LOSABLE(k)    1    /* master k may lose data */
#define FLUSHABLE(m)  1
#define ROLLABLE(m)   1
#define SYNCED        ALLM /* the masters a sync may target */
#define REACHABLE(m)  1    /* a sync may read master m */
#endif

#define FREE   0
#define UNUSED 0
#define ACQ    1
#define HELD   2
#define ENDED  3
#define FAILED 4

#define ALLM   ((1 << M) - 1)
#define BIT(i) (1 << (i))
#define MAX(a, b) ((a) > (b) -> (a) : (b))
#define CNT(s) (((s) & 1) + (((s) >> 1) & 1) + (((s) >> 2) & 1) + (((s) >> 3) & 1) + (((s) >> 4) & 1))

/* lineages, packed: run * 36 + repl * 6 + inc, each 0..5 */
#define PACK(r, p, i) ((r) * 36 + (p) * 6 + (i))
#define LIN(m)  PACK(rid[m], repl[m], inc[m])
#define LRUN(c) ((c) / 36)
#define LINC(c) ((c) % 6)

/* ---------------------------------------------------------------- state */

/* masters: process */
#if FRESH
#define INC0  0
#define CERT0 0
#else
#define INC0  1
#define CERT0 PACK(1, 1, 1)     /* certified in lineage run 1, repl 1, incarnation 1 */
#endif
byte rid[M] = 1;
byte repl[M] = 1;
byte ninc[M] = INC0;            /* incarnations drawn on m so far (never reused) */
/* masters: data */
byte lock[M], ctr[M], guard[M];
byte inc[M] = INC0;
byte cert[M] = CERT0;
#if SCRATCH
byte corg[M], gsid[M];
#endif
/* masters: the older copy (snapshot, lagging replica) */
byte slock[M], sctr[M], sguard[M];
byte sinc[M] = INC0;
byte scert[M] = CERT0;
#if SCRATCH
byte scorg[M], sgsid[M];
#endif
#ifdef BROKEN_CONFIG_DURABILITY
bool durnow[M];                 /* the current process is configured durable */
#endif

/* the fault model and the quarantine */
byte damaged;                   /* masters damaged now (F: fewer than Q) */
byte pend[M];                   /* leases live at a loss of m since its last certification */
byte nloss, nsnap;

/* scratch certifications in flight, and the scratches' ids */
#if SCRATCH
byte pcl[M], pcs[M];            /* the lineage read and the scratch id; 0: none */
byte nscr;                      /* scratches begun (ids 1..NS; one certifier) */
#endif

/* leases */
byte st[NL + 1], tok[NL + 1];
byte live;                      /* bit L: lease L is ACQ or HELD */
byte ndone;

/* ---------------------------------------------------------------- rules */

/*
 * CERTV(m): master m counts by itself now (rule V): its certificate names its
 * lineage. The old shortcuts and the mutants replace the comparison.
 */
#if defined(BROKEN_RUNID_IDENTITY)
#define CERTV(m) (cert[m] != 0 && LRUN(cert[m]) == rid[m])
#elif defined(BROKEN_CONFIG_DURABILITY)
#define CERTV(m) (cert[m] != 0 && (cert[m] == LIN(m) || \
	(durnow[m] && LRUN(cert[m]) != rid[m] && LINC(cert[m]) == inc[m])))
#elif defined(MUTANT_NO_LINEAGE)
#define CERTV(m) (cert[m] != 0)
#else
#define CERTV(m) (cert[m] != 0 && cert[m] == LIN(m))
#endif

/* SRCOK(m): a rule (a) sync source read now counts */
#if defined(BROKEN_STALE_SOURCE)
#define SRCOK(m) (probed & BIT(m))
#elif defined(MUTANT_UNCERTIFIED_SOURCE)
#define SRCOK(m) 1
#else
#define SRCOK(m) CERTV(m)
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

/* Lease L is over: its keys may expire at any moment; with lost requests a
   key that has not expired yet is a lost request (as in fencing.pml). */
inline over(L, m) {
	for (m : 0 .. M - 1) {
		if
		:: lock[m] == L -> lock[m] = FREE
		:: else -> skip
		fi
	};
	m = 0;
	live = live & ~BIT(L)
}

/* An incarnation is made where there is none (inspect.lua). */
inline ensureinc(m) {
	if
	:: inc[m] == 0 -> ninc[m]++; inc[m] = ninc[m]; assert(ninc[m] < 6)
	:: else -> skip
	fi
}

/* m was certified soundly: no longer damaged, nothing to wait for. */
inline certified(m) {
	damaged = damaged & ~BIT(m);
	pend[m] = 0
}

/*
 * A scratch's certification of master m reaches it (l: the lineage the
 * scratch read there, s: the scratch). certify.lua: only if the guard is
 * still there and names m's lineage (a certificate of an older lineage is
 * replaced).
 * BROKEN_UNGUARDED_BOOTSTRAP: the records it read are written with SET NX
 * (the incarnation, then the certificate), as the earlier version's bootstrap
 * wrote its marker: after a FLUSHALL (run and repl unchanged) that recreates
 * exactly the lineage it read.
 */
inline deliver(m, l, s) {
#ifdef BROKEN_UNGUARDED_BOOTSTRAP
	if
	:: inc[m] == 0 -> inc[m] = LINC(l)
	:: else -> skip
	fi;
	if
	:: cert[m] == 0 ->
		cert[m] = l; corg[m] = s;
		if
		:: guard[m] == l && gsid[m] == s && LIN(m) == l -> certified(m)
		:: else -> skip         /* not a certification: the damage stays */
		fi;
		printf("MSC: scratch %d: certificate SET NX on master %d (certified %d)\n", s, m, CERTV(m))
	:: else -> skip
	fi
#else
	if
	:: cert[m] != l && guard[m] == l && gsid[m] == s && LIN(m) == l ->
		cert[m] = l; corg[m] = s;
		certified(m);
		printf("MSC: scratch %d: master %d certified\n", s, m)
	:: else ->
		printf("MSC: scratch %d: certification of master %d refused or not needed\n", s, m)
	fi
#endif
}

/* ---------------------------------------------------------------- clients */

active [CLIENTS] proctype Client()
{
	byte a, L, m, todo, granted, qg, n, nc, t, i;

	for (a : 0 .. ATTEMPTS - 1) {
		d_step {
			L = _pid * ATTEMPTS + a + 1;
			st[L] = ACQ;
			live = live | BIT(L);
			todo = ALLM
		}
		/* round 1: SET NX, the counter, the certificate and the lineage */
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
				:: lock[m] == FREE && !CUT(L, m) ->
					lock[m] = L;
					granted = granted | BIT(m);
					t = MAX(t, ctr[m]);
					if
					:: !CERTV(m) -> qg = qg | BIT(m)
					:: else -> skip
					fi;
					printf("MSC: lease %d round 1: master %d grants, ctr %d, counts by itself %d\n",
						L, m, ctr[m], CERTV(m))
#if LOSSY
				:: lock[m] == FREE && LOST1(L, m) -> skip       /* lost (or a key not expired yet) */
#endif
				:: else -> skip                 /* a live lease's key: refused */
				fi;
				m = 0
			}
		od;
		if
		:: granted == ALLM || CNT(granted & ~qg) >= Q ->
			t = t + 1;      /* round 2: write back max + 1 */
			todo = granted
		:: else -> goto fail
		fi;
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
					if
					:: CERTV(m) -> nc++
					:: else -> skip
					fi;
					printf("MSC: lease %d round 2: master %d ok, ctr := %d, counts by itself %d\n",
						L, m, t, CERTV(m))
#if LOSSY
				:: lock[m] == L && ctr[m] < t && LOSE2 -> skip  /* lost */
#endif
				:: else -> skip                 /* key gone, or counter ahead */
				fi;
				m = 0
			}
		od;
		if
		:: nc >= Q || n == M -> skip
#if LOSSY
		:: GIVEUP -> goto fail                  /* ok replies lost, validity used up */
#else
		:: else -> goto fail
#endif
		fi;
		d_step {
			st[L] = HELD;
			tok[L] = t;
			printf("MSC: lease %d HELD with token %d\n", L, t);
			for (i : 1 .. NL) {
				assert(i == L || st[i] != HELD);        /* P0 */
				if
				:: st[i] == ENDED -> assert(tok[L] > tok[i])    /* P1 */
				:: else -> skip
				fi
			};
			i = 0; todo = 0; granted = 0; qg = 0; n = 0; nc = 0; t = 0
		}
		d_step {
			st[L] = ENDED;
			over(L, m);
			printf("MSC: lease %d ENDED\n", L)
		}
		goto next;
fail:
		skip;
		d_step {
			st[L] = FAILED;
			over(L, m);
			printf("MSC: lease %d FAILED\n", L);
			todo = 0; granted = 0; qg = 0; n = 0; nc = 0; t = 0
		}
next:
		skip
	};
	ndone++
}

/* ---------------------------------------------------------------- certifier */

active proctype Certifier()
{
	byte k, m, s, tg, lt, mx, n, mode, todo;
#if SCRATCH
	byte rl[M];
#endif
#ifdef BROKEN_STALE_SOURCE
	byte probed;
#endif

	for (k : 1 .. NACT) {
		if
#if SCRATCH
		/* rule S: certify a fresh cluster (every master a member) */
		:: ndone < CLIENTS && nscr < NS ->
			nscr++;
			/* 1. each master's lineage read (an incarnation made where
			   there is none) and its guard written (guard.lua, NX, only
			   in the lineage read), acknowledged */
			todo = ALLM;
			do
			:: todo == 0 -> break
			:: else -> atomic {
					pick(todo, m); todo = todo & ~BIT(m);
					ensureinc(m);
					rl[m] = LIN(m);
					if
					:: guard[m] == 0 ->
						guard[m] = rl[m]; gsid[m] = nscr;
						printf("MSC: scratch %d: guard on master %d\n", nscr, m)
					:: else -> skip                 /* kept (NX) */
					fi;
					m = 0
				}
			od;
			/* 2. every member read again: that guard, that lineage, no
			   certificate; 3. every counter raised to the maximum */
			atomic {
				mode = 1;
				for (m : 0 .. M - 1) {
					if
					:: guard[m] == rl[m] && gsid[m] == nscr && LIN(m) == rl[m] && cert[m] == 0 ->
						mx = MAX(mx, ctr[m])
					:: else -> mode = 0
					fi
				};
				if
				:: mode == 1 ->
					for (m : 0 .. M - 1) { ctr[m] = MAX(ctr[m], mx) };
					printf("MSC: scratch %d: checked, counters raised to %d\n", nscr, mx)
				:: else ->
					printf("MSC: scratch %d: abandoned\n", nscr)
				fi;
				m = 0
			}
			if
			:: mode == 0 -> goto abandon
			:: else -> skip
			fi;
			/* 4. the certifications: applied now, or in flight (Loss
			   delivers them at any later step, or never) */
			todo = ALLM;
			do
			:: todo == 0 -> break
			:: else -> atomic {
					pick(todo, m); todo = todo & ~BIT(m);
					if
					:: deliver(m, rl[m], nscr)
					:: pcl[m] == 0 -> pcl[m] = rl[m]; pcs[m] = nscr;
						printf("MSC: scratch %d: certification of master %d delayed\n", nscr, m)
					fi;
					m = 0
				}
			od;
abandon:
			skip;
			d_step {
				for (m : 0 .. M - 1) { rl[m] = 0 };
				m = 0; mx = 0; mode = 0; todo = 0
			}
		/* rule SC: complete a scratch, seen certified on another master */
		:: ndone < CLIENTS ->
			atomic {
				pick(ALLM, m);
				s = corg[m];
				tg = m;
				pick(ALLM & ~BIT(tg), m);
				if
				:: s != 0 && cert[m] != LIN(m) && guard[m] != 0 && gsid[m] == s && guard[m] == LIN(m) ->
					cert[m] = LIN(m); corg[m] = s;
					certified(m);
					printf("MSC: master %d certified by completing scratch %d (seen on master %d)\n", m, s, tg)
				:: else -> skip
				fi;
				m = 0; s = 0; tg = 0
			}
#endif
		/* rule Y: sync an uncertified master */
		:: ndone < CLIENTS ->
			atomic {
				pick(SYNCED, tg);
				if
				:: !CERTV(tg) && (pend[tg] & live) == 0 ->
					ensureinc(tg);
					lt = LIN(tg)
				:: else -> lt = 0       /* certified, or its quarantine is not over */
				fi
#ifdef BROKEN_STALE_SOURCE
				;
				probed = 0;     /* the probes this sync judges its sources by */
				for (m : 0 .. M - 1) {
					if
					:: CERTV(m) -> probed = probed | BIT(m)
					:: else -> skip
					fi
				};
				m = 0;
				if
				:: lt != 0 -> printf("MSC: sync of master %d: the probe finds certified the set %d\n", tg, probed)
				:: else -> skip
				fi
#endif
			}
			if
			:: lt == 0 -> goto done
			:: else -> skip
			fi;
			/* the sources, each read with its certificate and lineage;
			   (a) counts the certified ones, (b) needs every other master */
			atomic {
				if
				:: mode = 1
				:: mode = 2
				fi;
				for (m : 0 .. M - 1) {
					if
					:: m != tg && (mode == 2 || SRCOK(m)) && REACHABLE(m) ->
						mx = MAX(mx, ctr[m]); n++;
						printf("MSC: sync of master %d: source %d read, ctr %d, certified %d\n",
							tg, m, ctr[m], CERTV(m))
					:: m != tg && mode == 1 -> skip    /* not read, or not certified */
					:: else -> skip
					fi
				};
				m = 0;
				if
				:: (mode == 1 && n < M - Q + 1) || (mode == 2 && n < M - 1) -> goto done
				:: else -> skip
				fi
			}
			/* raised and certified, only in the lineage read (the sync guard) */
			atomic {
				if
				:: LIN(tg) == lt ->
					ctr[tg] = MAX(ctr[tg], mx);
					cert[tg] = lt;
#if SCRATCH
					corg[tg] = 0;
#endif
					certified(tg);
					printf("MSC: master %d synced (rule %c) and certified, ctr %d\n",
						tg, (mode == 1 -> 'a' : 'b'), ctr[tg])
				:: else -> skip
				fi
			}
done:
			skip;
			d_step { tg = 0; lt = 0; mx = 0; n = 0; mode = 0; todo = 0
#ifdef BROKEN_STALE_SOURCE
				; probed = 0
#endif
			}
		:: break
		fi
	}
}

/* ---------------------------------------------------------------- losses */

inline wipe(m) {
	lock[m] = FREE; ctr[m] = 0; inc[m] = 0; cert[m] = 0; guard[m] = 0
#if SCRATCH
	; corg[m] = 0; gsid[m] = 0
#endif
}

/* the older copy comes back; a key whose lease is over has expired */
inline restore(m) {
	if
	:: slock[m] != FREE && (live & BIT(slock[m])) -> lock[m] = slock[m]
	:: else -> lock[m] = FREE
	fi;
	ctr[m] = sctr[m]; inc[m] = sinc[m]; cert[m] = scert[m]; guard[m] = sguard[m]
#if SCRATCH
	; corg[m] = scorg[m]; gsid[m] = sgsid[m]
#endif
}

inline snapshot(m) {
	slock[m] = lock[m]; sctr[m] = ctr[m]; sinc[m] = inc[m]; scert[m] = cert[m]; sguard[m] = guard[m]
#if SCRATCH
	; scorg[m] = corg[m]; sgsid[m] = gsid[m]
#endif
}

#ifdef BROKEN_CONFIG_DURABILITY
#define NEWCONFIG(m) if :: durnow[m] = 0 :: durnow[m] = 1; \
	printf("MSC: master %d: its new process is configured appendfsync always\n", m) fi
#else
#define NEWCONFIG(m) skip
#endif

#if EMPTY
#define EMPTY_OPT :: rid[m]++; repl[m]++; wipe(m); NEWCONFIG(m); \
	printf("MSC: master %d RESTARTS EMPTY (run %d repl %d)\n", m, rid[m], repl[m])
#else
#define EMPTY_OPT
#endif
#if FLUSH
#define FLUSH_OPT :: FLUSHABLE(m) -> wipe(m); \
	printf("MSC: master %d FLUSHALL (run %d repl %d kept, incarnation gone)\n", m, rid[m], repl[m])
#else
#define FLUSH_OPT
#endif
#if ROLLBACK
#define ROLLBACK_OPT :: ROLLABLE(m) -> rid[m]++; repl[m]++; restore(m); NEWCONFIG(m); \
	printf("MSC: master %d RESTARTS FROM AN OLDER SNAPSHOT (run %d repl %d): key %d ctr %d, certificate of run %d\n", \
		m, rid[m], repl[m], lock[m], ctr[m], LRUN(cert[m]))
#else
#define ROLLBACK_OPT
#endif
#if FAILBACK
#define FAILBACK_OPT :: repl[m]++; restore(m); \
	printf("MSC: master %d FAILS BACK, resynced from a lagging copy (run %d kept, repl %d): key %d ctr %d, certificate of run %d\n", \
		m, rid[m], repl[m], lock[m], ctr[m], LRUN(cert[m]))
#else
#define FAILBACK_OPT
#endif
#if KEEP
#define KEEP_OPT(k) \
	:: atomic { ndone < CLIENTS && nloss < LOSSES -> m = k; \
		rid[m]++; repl[m]++; NEWCONFIG(m); nloss++; \
		printf("MSC: master %d restarts keeping every write (run %d repl %d)\n", m, rid[m], repl[m]); \
		m = 0 }
#else
#define KEEP_OPT(k)
#endif
#if SNAPS
#define SNAP_OPT(k) \
	:: atomic { ndone < CLIENTS && nsnap < SNAPS -> snapshot(k); nsnap++; \
		printf("MSC: master %d: snapshot (key %d ctr %d)\n", k, lock[k], ctr[k]) }
#else
#define SNAP_OPT(k)
#endif
#if SCRATCH
#define DELIVER_OPT(k) \
	:: atomic { ndone < CLIENTS && pcl[k] != 0 -> m = k; deliver(m, pcl[m], pcs[m]); pcl[m] = 0; pcs[m] = 0; m = 0 }
#else
#define DELIVER_OPT(k)
#endif

#define LOSE(k) \
	:: atomic { ndone < CLIENTS && nloss < LOSSES && CNT(damaged | BIT(k)) < Q && LOSABLE(k) -> \
		m = k; \
		if \
		EMPTY_OPT \
		FLUSH_OPT \
		ROLLBACK_OPT \
		FAILBACK_OPT \
		fi; \
		damaged = damaged | BIT(m); pend[m] = pend[m] | live; nloss++; \
		m = 0 } \
	KEEP_OPT(k) \
	SNAP_OPT(k) \
	DELIVER_OPT(k)

/*
 * Loss: at any step while a client runs, a loss within F on any master, a
 * restart that kept everything, a snapshot, or the arrival of a delayed
 * certification.
 */
active proctype Loss()
{
	byte m;
end:
	do
	LOSE(0)
	LOSE(1)
	LOSE(2)
#if M > 3
	LOSE(3)
	LOSE(4)
#endif
	:: ndone == CLIENTS -> break
	od
}
