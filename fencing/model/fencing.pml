/*
 * fencing.pml -- Promela model of the quorumlock fencing-token protocol.
 *
 * One lock key K on M = 3 masters, quorum Q = 2. CLIENTS client processes
 * each make ATTEMPTS acquisition attempts (a fresh lease id per attempt).
 * Leases end at arbitrary times, keys of over leases expire at arbitrary
 * times, at most one master loses data (a restart without persistence or a
 * FLUSHALL, or a failover to a lagging replica) and is quarantined, requests
 * may be lost and clients may give up (LOSSY), and every lease that was HELD
 * may send up to WRITES writes to a fenced store, also after it ended (a stale
 * holder).
 *
 * Round 1 counts a quarantined master's grant only in a round where every
 * master granted (the all-grant rule); other rounds need Q grants from masters
 * that are not quarantined.
 *
 * Variants, selected with cpp macros (spin passes -D on to the preprocessor):
 *
 *   spin -a fencing.pml                           sound protocol, 2 clients x 2 attempts
 *   spin -a -DCLIENTS=3 -DATTEMPTS=1 fencing.pml  sound protocol, 3 clients x 1 attempt
 *   spin -a -DNAIVE fencing.pml                   naive SET NX + INCR protocol: must fail
 *   spin -a -DBROKEN_FIRST_CONTACT fencing.pml    a client meeting a master for the
 *                                                 first time trusts it: must fail
 *   spin -a -DBROKEN_ALLGRANT fencing.pml         quarantined grants count whenever Q
 *                                                 masters granted: must fail
 *   spin -a -DBROKEN_FAILOVER fencing.pml         a failover is not quarantined: must fail
 *   spin -a -DBROKEN_OWN_LAMBDA fencing.pml       the quarantine waits only for the leases
 *                                                 of the client that syncs the master (its
 *                                                 own longest TTL, issue 16 section 2
 *                                                 case 5): must fail
 *   spin -a -DBROKEN_FASTPATH fencing.pml         the fast path taken when any Q granting
 *                                                 masters raised, quarantined ones
 *                                                 included: must fail
 *   spin -a -DNARROW_ALLGRANT fencing.pml         every ok of round 2 counts, a quarantined
 *                                                 master's too (the fast path as first
 *                                                 specified): must fail
 *
 * The fast path (FASTPATH, on by default): round 1 carries a proposal
 * p = cache + 1, cache being the highest token the client has seen for K
 * (0: unknown, then p = 1, as the Go client proposes for a key it has not
 * seen); a granting master raises its counter to p
 * if that increases it, in the same atomic step, and says so. If Q granting
 * masters that are not quarantined raised, or all M granted and raised, the
 * token is p and round 2 is skipped; otherwise the token is
 * max(counters before, p if any master raised) + 1, written back as before,
 * except that oks count like grants (ENOUGH below): Q oks from masters that
 * are not quarantined, or oks from every master.
 *
 * Other macros: WRITES, LOSSY, RESTART, FAILOVER, CHECK_P1, FASTPATH, EVICT
 * (bounds section below), INTERLEAVED (see Writer), WITNESS_ALLGRANT (an
 * assertion that must fail: a lease is acquired with a quarantined master's
 * grant counted) and WITNESS_FASTPATH (an assertion that must fail: a lease
 * is acquired by the fast path in a round that counted a quarantined grant).
 * fencing/model/model_test.go runs the checks.
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
#define WRITES 1                /* writes each HELD lease may send to the store (with
                                   CHECK_P1, P1 implies P2 whatever the number of
                                   writes: see docs/fencing-model.md) */
#endif
#ifndef LOSSY
#define LOSSY 1                 /* 1: requests of both rounds may be lost, and a client
                                   may give up despite Q oks (lost ok replies, or its
                                   validity is used up); lost grant replies are covered
                                   by lost requests, see docs/fencing-model.md */
#endif
#ifndef RESTART
#define RESTART 1               /* 1: at most one data loss on one master; 0: none */
#endif
#ifndef FAILOVER
#define FAILOVER 1              /* 1: the loss may also be a failover to a lagging
                                   replica (kind b); 0: only restarts and FLUSHALL
                                   (kind a) */
#endif
#ifndef CHECK_P1
#define CHECK_P1 1              /* 0: do not assert P1 (to see P2 fail in the naive run) */
#endif
#ifdef NAIVE
#undef FASTPATH
#define FASTPATH 0              /* the naive protocol has no proposal */
#endif
#ifndef FASTPATH
#define FASTPATH 1              /* 1: round 1 proposes cache + 1 and may fence in one
                                   round; 0: the two-round protocol only */
#endif
#ifdef ANYP                     /* -DANYP=k: every attempt proposes any p from 0 (none)
                                   to k, whatever its cache holds (a superset of the
                                   proposals a cache can make, given counters <= k - 1;
                                   lets runs with 1 attempt per client use the fast path) */
#endif
#ifndef EVICT
#define EVICT 1                 /* 1: an attempt may propose 1 although the client
                                   knows a higher token (its bounded cache evicted
                                   K); 0: it always proposes cache + 1 */
#endif
#define NL (CLIENTS * ATTEMPTS) /* lease ids are 1..NL; 0 means "no lease" */
#ifdef BROKEN_OWN_LAMBDA
#define OWNL (((1 << ATTEMPTS) - 1) << (ATTEMPTS + 1))  /* the leases of client 1,
                                   the client that syncs the lost master */
#endif
#define LOSTM 0                 /* the master that may lose data: the masters are
                                   symmetric (every choice of a master is free), so
                                   a loss on master 0 stands for a loss on any */

#if M != 3
#error "pick(), CNT(), the token rule and the loss's counter read hard-code M = 3"
#endif
#if defined(BROKEN_FIRST_CONTACT) && CLIENTS > 5
#error "met (a short) holds 3 bits per client"
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
#define CNT(s) (((s) & 1) + (((s) >> 1) & 1) + (((s) >> 2) & 1))   /* |s|, M = 3 */

/*
 * QUAR(m): the client's reply from master m says "quarantined": the master
 * lost data and has not been re-synchronised. Sound: every client sees it
 * (the missing epoch marker, a new run_id). BROKEN_FIRST_CONTACT: only a
 * client that had met m before the loss notices; a client meeting m for the
 * first time trusts it (defect 1 of issue 7).
 */
#ifdef BROKEN_FIRST_CONTACT
#define MET(m)  BIT(_pid * M + (m))
#define MET_OF(m) (4681 << (m))         /* the MET bits of master m, all clients (4681 = 0b1001001001001) */
#define QUAR(m) (quar[m] && (knew & MET(m)))
#else
#define QUAR(m) quar[m]
#endif

/*
 * COUNTS: round 1 succeeds. granted: masters that granted; qg: those of them
 * whose grant said "quarantined".
 *   sound: every master granted (then all grants count), or Q masters that
 *          are not quarantined granted (the strict rule)
 *   BROKEN_ALLGRANT: quarantined grants count whenever Q masters granted
 */
#ifdef BROKEN_ALLGRANT
#define COUNTSOF(g, q) (CNT(g) >= Q)
#else
#define COUNTSOF(g, q) ((g) == ALLM || CNT((g) & ~(q)) >= Q)
#endif
#define COUNTS COUNTSOF(granted, qg)

/*
 * FAST: the token is the proposal, no round 2. raised: granting masters that
 * raised their counter to p (a subset of granted).
 *   sound: Q granting masters that are not quarantined raised, or every
 *          master granted and every master raised
 *   BROKEN_FASTPATH: any Q granting masters raised, quarantined ones included
 */
#if defined(BROKEN_FASTPATH)
#define FASTOF(g, q, r) (CNT(r) >= Q)
#else
#define FASTOF(g, q, r) (CNT((r) & ~(q)) >= Q || ((g) == ALLM && (r) == ALLM))
#endif
#define FAST FASTOF(granted, qg, raised)

/*
 * ENOUGH: round 2 succeeded. With the fast path, oks count like grants: an
 * ok from a master whose grant said "quarantined" counts only if every master
 * said ok; otherwise Q oks from the other masters are needed (nq counts
 * them). Without this rule, a fast-path lease whose raise on a master is lost
 * with the master's data, while the lease is still in round 1, can end up
 * with the token of a lease that counted that master's grant and its ok
 * meanwhile (P1 fails: see docs/fencing-model.md). NARROW_ALLGRANT drops the
 * rule: every ok counts (the fast path as first specified: must fail).
 */
#if FASTPATH && !defined(NARROW_ALLGRANT)
#define ENOUGH (nq >= Q || n == M)
#else
#define ENOUGH (n >= Q)
#endif

/* ---------------------------------------------------------------- state */

/* masters */
byte lock[M];                   /* FREE, STALE or the id of the live lease owning K */
byte ctr[M];                    /* fencing counter: never expires, only raised
                                   (a data loss lowers it and quarantines the master) */
bool quar[M];                   /* lost data and not yet re-synchronised */
#ifdef BROKEN_FIRST_CONTACT
short met;                      /* bit _pid*M+m: client _pid had a reply from m
                                   before the loss (frozen from the loss on) */
short knew;                     /* met of the lost master at loss time */
bool  lost;                     /* the loss has happened */
#endif

/* leases (index 0 unused) */
byte  st[NL + 1];               /* UNUSED .. FAILED */
byte  tok[NL + 1];              /* token of a lease, set when it becomes HELD */
short eb[NL + 1];               /* eb[L2] has bit L1 <=> L1 had ENDED when L2 became
                                   HELD ("L1 ended before L2 was acquired") */
short live;                     /* bit L set while lease L is ACQ or HELD */
short pend;                     /* bit L set while lease L is ACQ or HELD and was so
                                   when the master lost data (see Loss) */
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
	live = live & ~BIT(L);
	pend = pend & ~BIT(L)   /* kept a subset of live: fewer distinct states */
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
	byte qg;                /* those of them that replied "quarantined" */
	byte n;                 /* oks in round 2 */
	byte t;                 /* max counter replied in round 1, then the token */
	byte above;             /* max counter of "counter ahead" replies in round 2 */
	bool again;             /* round 2 is being run a second time */
#if FASTPATH
	byte cache;             /* (not with ANYP, which ignores it) highest token this client has seen for K (its last
	                           HELD token, or a counter it read); 0: unknown */
	byte p;                 /* the proposal of this attempt (0: none) */
	byte raised;            /* granting masters that raised their counter to p */
	bool fast;              /* the lease is fenced in one round */
	byte nq;                /* oks in round 2 from masters whose grant did not say
	                           "quarantined" */
#endif

	for (a : 0 .. ATTEMPTS - 1) {
		/* start the attempt with a fresh lease id */
		d_step {
			L = _pid * ATTEMPTS + a + 1;
			st[L] = ACQ;
			live = live | BIT(L);
			todo = ALLM;
#if FASTPATH && !defined(ANYP)
			p = cache + 1
#endif
		}
#if FASTPATH && defined(ANYP)
		/* any proposal from 0 (none) to ANYP, whatever the cache holds */
		do
		:: p < ANYP -> p++
		:: break
		od;
#elif FASTPATH && EVICT
		if
		:: p > 1 -> p = 1       /* the cache evicted K: it proposes 1, as for a key
		                           it never saw */
		:: true -> skip
		fi;
#endif

		/*
		 * 1. Round 1, one master at a time in any order, quarantined
		 *    masters included.
		 *    sound: SET K L NX; a grant replies ctr[m] and whether m is
		 *           quarantined.
		 *    naive: SET K L NX + INCR ctr[m] in one script; a grant
		 *           replies the INCR result.
		 *    FASTPATH: in the same step, a granting master raises
		 *           ctr[m] to p if p > 0 and ctr[m] < p, and says so;
		 *           the counter replied is the one before the raise.
		 */
		do
		:: todo == 0 -> break
		:: else ->
			atomic {
				pick(todo, m);
				todo = todo & ~BIT(m);
				if
				:: lock[m] == FREE || lock[m] == STALE ->
					/* key absent (or a stale key has expired): grant */
					lock[m] = L;
#ifdef NAIVE
					ctr[m]++;
#endif
					granted = granted | BIT(m);
					if
					:: QUAR(m) -> qg = qg | BIT(m)
					:: else -> skip
					fi;
					t = MAX(t, ctr[m]);
#ifdef BROKEN_FIRST_CONTACT
					met = met | (lost -> 0 : MET(m));
					if
					:: quar[m] && !QUAR(m) ->
						printf("MSC: lease %d: client %d meets master %d for the first time (after its loss) and trusts it\n",
							L, _pid, m)
					:: else -> skip
					fi;
#endif
					printf("MSC: lease %d round 1: master %d grants, ctr %d, quarantined %d\n",
						L, m, ctr[m], QUAR(m));
#if FASTPATH
					if
					:: p > 0 && ctr[m] < p ->
						ctr[m] = p;
						raised = raised | BIT(m);
						printf("MSC: lease %d round 1: master %d raises ctr to %d\n", L, m, p)
					:: else -> skip
					fi
#endif
#if LOSSY
				:: lock[m] == FREE || lock[m] == STALE ->
					skip                            /* request lost (or, for a stale
					                                   key: not expired yet) */
#if FASTPATH
				:: (lock[m] == FREE || lock[m] == STALE) && p > 0 && ctr[m] < p ->
					ctr[m] = p;                     /* granted and raised, reply lost
					                                   (or not waited for): the
					                                   client does not count it */
					printf("MSC: lease %d round 1: master %d raises ctr to %d, reply lost\n", L, m, p)
#endif
#else
				:: lock[m] == STALE ->
					skip                            /* stale key not expired yet: denied */
#endif
				:: else ->
#ifdef BROKEN_FIRST_CONTACT
					met = met | (lost -> 0 : MET(m));
#endif
					skip                            /* the key of a live lease: denied */
				fi;
				m = 0
			}
		od;

		/*
		 * 2. Decision (COUNTS above). Unless every master granted, a grant
		 *    of a quarantined master does not count and the attempt needs Q
		 *    grants from the others.
		 */
#if FASTPATH && !defined(ANYP)
		cache = MAX(cache, t);  /* the highest counter read */
#endif
		if
		:: !COUNTS -> goto fail
		:: else -> skip
		fi;

#ifndef NAIVE
		/*
		 * 3. Token t = max(counters replied by the counted grants) + 1.
		 *    With M = 3, t as computed (the max over every grant) is that:
		 *    if every master granted, all grants count and every master
		 *    replied its counter; otherwise COUNTS means exactly two masters
		 *    granted, neither of them quarantined (see the assertion).
		 */
		d_step {
#ifndef BROKEN_ALLGRANT
			assert(granted == ALLM || (granted & qg) == 0);
#endif
#if FASTPATH
			/* fast path: token p; otherwise the token is above p too if
			   a master raised to p */
			fast = FAST;
			if
			:: fast -> t = p; todo = 0
			:: !fast && raised != 0 -> t = MAX(t, p) + 1; todo = granted
			:: !fast && raised == 0 -> t = t + 1; todo = granted
			fi;
			raised = 0;
			n = 0
			/* qg is kept: round 2 counts oks like grants */
#else
			t = t + 1; todo = granted; n = 0;
#ifndef WITNESS_ALLGRANT
			qg = 0                  /* not needed any more: merges states */
#else
			skip
#endif
#endif
		}

		/*
		 * 4. Round 2, to each granting master in any order (quarantined
		 *    ones included), atomic per master (writeback.lua): if
		 *    lock[m] != L, not-ok; else if ctr[m] >= t, not-ok, "counter
		 *    ahead" (only a quarantine's counter sync can do that); else
		 *    ctr[m] = t, ok. Every ok counts (FASTPATH: see ENOUGH).
		 */
#if FASTPATH
		if
		:: fast ->
			printf("MSC: lease %d FAST PATH: token %d, no round 2\n", L, t);
#if LOSSY
			if
			:: goto held
			:: goto fail    /* validity used up: the client gives up */
			fi
#else
			goto held
#endif
		:: else -> skip
		fi;
#endif
round2:
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
#if FASTPATH
					if
					:: qg & BIT(m) -> skip
					:: else -> nq++
					fi;
#endif
					printf("MSC: lease %d round 2: master %d ok, ctr := %d\n", L, m, t)
#if LOSSY
				:: lock[m] == L && ctr[m] < t ->
					skip                            /* request lost */
#endif
				:: lock[m] == L && ctr[m] >= t ->
					above = MAX(above, ctr[m]);     /* not-ok: counter ahead */
					printf("MSC: lease %d round 2: master %d counter ahead, ctr %d >= %d\n", L, m, ctr[m], t)
				:: lock[m] != L ->
					skip                            /* not-ok: the key is gone
					                                   (the master lost data) */
				fi;
				m = 0
			}
		od;

		/*
		 * 5. Fewer than Q oks: the attempt fails, unless a master said
		 *    "counter ahead": then round 2 is run once more, to the same
		 *    masters, with the token above it (redlock's writeBack).
		 */
		if
		:: !ENOUGH && above > 0 && !again -> goto retry
		:: !ENOUGH && (above == 0 || again) -> goto fail
#if LOSSY
		:: ENOUGH && above > 0 && !again ->
			goto retry                      /* ok replies lost: the client
			                                   saw fewer than Q oks */
		:: ENOUGH -> goto fail          /* ok replies lost (or validity used
		                                   up): the client gives up anyway */
#endif
		:: ENOUGH -> skip
		fi;
		goto held;
retry:
		skip;
		d_step {
			printf("MSC: lease %d round 2 again with token %d\n", L, above + 1);
			t = above + 1; todo = granted; n = 0; above = 0; again = true;
#if FASTPATH
			nq = 0;
#endif
			skip
		}
		goto round2;
held:
		skip;
#endif

		/*
		 * HELD with token t. Record which leases had already ended (the
		 * happened-before relation) and check P1 against each of them.
		 */
		d_step {
			st[L] = HELD;
			tok[L] = t;
#ifdef WITNESS_ALLGRANT
			assert(qg == 0);    /* must fail: shows that a quarantined master's
			                       grant does get counted in the sound model */
#endif
#ifdef WITNESS_FASTPATH
			assert(!(fast && qg != 0)); /* must fail: shows that the sound model
			                               does acquire leases by the fast path in
			                               an all-grant round that counted a
			                               quarantined master */
#endif
#if FASTPATH && !defined(ANYP)
			cache = MAX(cache, t);  /* its token (the cache already holds the
			                           highest counter read) */
#endif
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
			m = 0; todo = 0; granted = 0; qg = 0; n = 0; t = 0; above = 0; again = false
#if FASTPATH
			; p = 0; raised = 0; fast = false; nq = 0
#endif
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
			todo = 0; granted = 0; qg = 0; n = 0; t = 0; above = 0; again = false
#if FASTPATH
			; p = 0; raised = 0; fast = false; nq = 0
#endif
		}
next:
		skip
	};
	ndone++
}

/* ---------------------------------------------------------------- data loss */

/*
 * Loss: at most one data loss, at any moment (or never: the process may stay
 * at end0), on master LOSTM (see its definition). Two kinds:
 *   (a) restart without persistence, or FLUSHALL: the master loses its key
 *       and its counter;
 *   (b) failover to a lagging replica (FAILOVER): the master's state is
 *       replaced by an older one: the key is gone or unchanged (or, without
 *       LOSSY, a stale key), the counter is any value from 0 to its current
 *       one (the replica missed the last raises).
 * The master is quarantined from the moment of the loss (BROKEN_FAILOVER: not
 * after a failover). The quarantine ends only once every lease that was ACQ or
 * HELD at loss time is over; then the master reads the counters of the
 * M - Q + 1 = 2 other masters one at a time, in any order, with other
 * processes interleaving, raises its counter to their max and leaves
 * quarantine. A quarantined master keeps answering: it grants in round 1 and
 * takes part in round 2 (the clients decide whether its grant counts).
 */
#if RESTART
active proctype Loss()
{
	byte m = LOSTM;         /* the master that loses data */
	byte others;            /* masters whose counter is still to be read */
	byte o;                 /* the master read in this step */
	byte r;                 /* max counter read so far */
#ifdef BROKEN_FAILOVER
	bool q = true;          /* the loss quarantines the master */
#endif

end0:
	atomic {
		if
		:: /* (a) restart without persistence, or FLUSHALL */
			lock[m] = FREE;
			ctr[m] = 0;
			printf("MSC: master %d LOSES ALL DATA (restart/FLUSHALL); leases ACQ/HELD: mask %d\n",
				m, live)
#if FAILOVER
		:: /* (b) failover to a lagging replica */
			if
			:: lock[m] = FREE               /* the replica missed the SET */
			:: skip                         /* the replica has the key */
#if !LOSSY
			:: lock[m] = STALE              /* the replica missed a DEL, or has
			                                   an older lease's key */
#endif
			fi;
			do                              /* the replica missed the last raises */
			:: ctr[m] > 0 -> ctr[m]--
			:: break
			od;
#ifdef BROKEN_FAILOVER
			q = false;                      /* a failover goes unnoticed */
#endif
			printf("MSC: master %d FAILS OVER to a lagging replica: key %d, ctr %d; leases ACQ/HELD: mask %d\n",
				m, lock[m], ctr[m], live)
#endif
		fi;
#ifdef BROKEN_FAILOVER
		if
		:: !q -> skip
		:: else ->
#endif
			quar[m] = true;
			pend = live;
			others = ALLM & ~BIT(m)
#ifdef BROKEN_FIRST_CONTACT
			;
			knew = met & MET_OF(m);
			met = 0;
			lost = true
#endif
#ifdef BROKEN_FAILOVER
		fi
#endif
	}
#ifdef BROKEN_FAILOVER
	if
	:: !q -> goto done
	:: else -> skip
	fi;
#endif
end1:
#ifdef BROKEN_OWN_LAMBDA
	(pend & OWNL) == 0;     /* broken: wait only for the syncing client's own
	                           leases (its own longest TTL) */
#else
	pend == 0;              /* wait until every pending lease is over */
#endif
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
done:
	skip
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

/*
 * Other keys of K's fence bucket (-DSHARED_BUCKET=n; docs/fencing.md,
 * "Buckets"). K's counter is its bucket's: every acquisition of another key
 * of the bucket raises it on some masters (round 1's raise to a proposal, or
 * a write-back), at any moment, and never lowers it. Those keys' own locks
 * touch nothing of K's (its lock keys, its leases). So the other keys are
 * modelled as up to n raises by one of any master's counter, interleaved
 * anywhere with K's clients, the loss and the sync; a raise by more is a run
 * of raises by one, which the interleavings include. K's properties (one
 * holder, strictly growing tokens) must hold as they do without them.
 */
#ifdef SHARED_BUCKET
active proctype OtherKeys()
{
	byte n = 0;
	do
	:: n < SHARED_BUCKET ->
		if
		:: ctr[0]++
		:: ctr[1]++
		:: ctr[2]++
		fi;
		n++
	:: else -> break
	od
}
#endif

