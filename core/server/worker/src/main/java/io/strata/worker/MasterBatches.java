package io.strata.worker;

import io.strata.common.exception.StrataException;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.GetUfsWriteTargetRequest;
import io.strata.proto.GetUfsWriteTargetResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's block commits and UFS write targets, asked for by many threads at once (a shuffle seal's files, many
 * writers' blocks), sent to the master in batched calls ({@link CallBatcher}): a lone one goes alone, as
 * CommitBlock or GetUfsWriteTarget; those made while one is in flight go together as CommitBlocks or
 * GetUfsWriteTargets, each entry answered as the single call would. {@link MasterSync} keeps the per-commit
 * bookkeeping around each call.
 *
 * <p>Thread-safe: the batchers serialise the sending; the master calls run on the sending caller's thread with no
 * lock held.
 */
final class MasterBatches {
  private static final Logger LOG = LoggerFactory.getLogger(MasterBatches.class);

  private final io.strata.common.master.MasterConnection master;
  private final long rpcTimeoutMs;

  MasterBatches(io.strata.common.master.MasterConnection master, long rpcTimeoutMs) {
    this.master = master;
    this.rpcTimeoutMs = rpcTimeoutMs;
  }

  /** Commits at the master, alone or in a batch; throws the master's answer for this entry. */
  void commit(CommitBlockRequest req) throws StrataException {
    commitCalls.call(req);
  }

  /** Where to write a file's UFS copy, asked alone or in a batch; throws the master's answer for this entry. */
  GetUfsWriteTargetResponse target(GetUfsWriteTargetRequest req) throws StrataException {
    return targetCalls.call(req);
  }

  /**
   * Commits several blocks, sent now on this thread in batched calls of at most {@link #BATCH_MAX} (not through the
   * batcher: the caller has the batch already); an outcome per request, in order.
   */
  List<CallBatcher.Outcome<Boolean>> commits(List<CommitBlockRequest> reqs) {
    return inRuns(reqs, this::commitBatch, 0);
  }

  /** Where to write several files' UFS copies, asked as {@link #commits} sends commits. */
  List<CallBatcher.Outcome<GetUfsWriteTargetResponse>> targets(List<GetUfsWriteTargetRequest> reqs) {
    return inRuns(reqs, this::targetBatch, 2);
  }

  /** Sends {@code reqs} in runs of at most {@link #BATCH_MAX}, counted at {@code direct[counter]} and the next. */
  private <Q, A> List<CallBatcher.Outcome<A>> inRuns(List<Q> reqs,
      java.util.function.Function<List<Q>, List<CallBatcher.Outcome<A>>> send, int counter) {
    List<CallBatcher.Outcome<A>> out = new ArrayList<>(reqs.size());
    for (int i = 0; i < reqs.size(); i += BATCH_MAX) {
      List<Q> run = reqs.subList(i, Math.min(reqs.size(), i + BATCH_MAX));
      try {
        out.addAll(send.apply(run));
      } catch (RuntimeException e) {
        // This run's entries fail; the runs answered before keep their answers (their commits were taken).
        StrataException failed = new io.strata.common.exception.InternalException("A batched call failed: " + e, e);
        for (int k = 0; k < run.size(); k++) {
          out.add(CallBatcher.Outcome.failed(failed));
        }
      }
      direct[counter].increment();
      direct[counter + 1].add(run.size());
    }
    return out;
  }

  /** Calls sent by {@link #commits} and {@link #targets}, counted as {@link #counts} counts them. */
  private final java.util.concurrent.atomic.LongAdder[] direct = {new java.util.concurrent.atomic.LongAdder(),
      new java.util.concurrent.atomic.LongAdder(), new java.util.concurrent.atomic.LongAdder(),
      new java.util.concurrent.atomic.LongAdder()};

  /**
   * Batched calls sent so far, through the batcher and for callers with a batch of their own: {commit batches, commits
   * in them, target batches, targets in them}.
   */
  long[] counts() {
    return new long[] {commitCalls.batches() + direct[0].sum(), commitCalls.calls() + direct[1].sum(),
        targetCalls.batches() + direct[2].sum(), targetCalls.calls() + direct[3].sum()};
  }

  static final int BATCH_MAX = 500;
  private final CallBatcher<CommitBlockRequest, Boolean> commitCalls = new CallBatcher<>(BATCH_MAX, this::commitBatch);
  private final CallBatcher<GetUfsWriteTargetRequest, GetUfsWriteTargetResponse> targetCalls =
      new CallBatcher<>(BATCH_MAX, this::targetBatch);

  /** Set once a master answered a batched call UNIMPLEMENTED (an older master): one call per entry from then on. */
  private volatile boolean batchesUnsupported;

  private List<CallBatcher.Outcome<Boolean>> commitBatch(List<CommitBlockRequest> reqs) {
    return batched(reqs, CommitBlockRequest::getWorkerToken, r -> {
      call(st -> st.commitBlock(r));
      return true;
    }, run -> {
      List<CallBatcher.Outcome<Boolean>> out = new ArrayList<>(run.size());
      io.strata.proto.CommitBlocksResponse res = call(st -> st.commitBlocks(
          io.strata.proto.CommitBlocksRequest.newBuilder().addAllCommits(run).build()));
      for (io.strata.proto.EntryResult r : answered(res.getResultsList(), run.size())) {
        out.add(r.getErrorCode().isEmpty() ? CallBatcher.Outcome.ok(true) : CallBatcher.Outcome.failed(error(r)));
      }
      return out;
    });
  }

  private List<CallBatcher.Outcome<GetUfsWriteTargetResponse>> targetBatch(List<GetUfsWriteTargetRequest> reqs) {
    return batched(reqs, GetUfsWriteTargetRequest::getWorkerToken, r -> call(st -> st.getUfsWriteTarget(r)), run -> {
      List<CallBatcher.Outcome<GetUfsWriteTargetResponse>> out = new ArrayList<>(run.size());
      io.strata.proto.GetUfsWriteTargetsResponse res = call(st -> st.getUfsWriteTargets(
          io.strata.proto.GetUfsWriteTargetsRequest.newBuilder().addAllTargets(run).build()));
      for (io.strata.proto.UfsWriteTargetResult r : answered(res.getTargetsList(), run.size())) {
        out.add(r.getResult().getErrorCode().isEmpty() ? CallBatcher.Outcome.ok(r.getTarget())
            : CallBatcher.Outcome.failed(error(r.getResult())));
      }
      return out;
    });
  }

  /** One master call of one entry, or of a run of entries (one outcome each). */
  @FunctionalInterface
  private interface MasterCall<Q, A> {
    A call(Q q) throws StrataException;
  }

  /**
   * Sends {@code reqs}: alone when there is one (or the master takes no batches), else in runs of one registration
   * each batched; a run's failure fails that run's entries only. A master that does not know the batched call
   * (UNIMPLEMENTED: older than this worker) gets one call per entry, now and from then on.
   */
  private <Q, A> List<CallBatcher.Outcome<A>> batched(List<Q> reqs, java.util.function.Function<Q, String> token,
      MasterCall<Q, A> single, MasterCall<List<Q>, List<CallBatcher.Outcome<A>>> batch) {
    List<CallBatcher.Outcome<A>> out = new ArrayList<>(reqs.size());
    if (reqs.size() == 1 || batchesUnsupported) {
      for (Q r : reqs) {
        try {
          out.add(CallBatcher.Outcome.ok(single.call(r)));
        } catch (StrataException e) {
          out.add(CallBatcher.Outcome.failed(e));
        }
      }
      return out;
    }
    for (List<Q> run : sameRegistration(reqs, token)) {
      try {
        out.addAll(batch.call(run));
      } catch (StrataException e) {
        if (e.getCause() instanceof io.grpc.StatusRuntimeException sre
            && sre.getStatus().getCode() == io.grpc.Status.Code.UNIMPLEMENTED) {
          LOG.info("The master takes no batched calls (an older master): one call per commit from now on");
          batchesUnsupported = true;
          out.addAll(batched(run, token, single, batch));
          continue;
        }
        for (int i = 0; i < run.size(); i++) {
          out.add(CallBatcher.Outcome.failed(e));
        }
      }
    }
    return out;
  }

  /** The requests in runs of one registration (token): a batch names one, and a re-registration may split one. */
  private static <T> List<List<T>> sameRegistration(List<T> reqs, java.util.function.Function<T, String> token) {
    List<List<T>> runs = new ArrayList<>();
    for (T r : reqs) {
      if (runs.isEmpty() || !token.apply(runs.get(runs.size() - 1).get(0)).equals(token.apply(r))) {
        runs.add(new ArrayList<>());
      }
      runs.get(runs.size() - 1).add(r);
    }
    return runs;
  }

  private static <T> List<T> answered(List<T> results, int asked) throws StrataException {
    if (results.size() != asked) {
      throw new io.strata.common.exception.InternalException("The master answered " + results.size()
          + " entries of a batch of " + asked);
    }
    return results;
  }

  private static StrataException error(io.strata.proto.EntryResult r) {
    try {
      return io.strata.common.exception.ErrorCode.valueOf(r.getErrorCode()).toException(r.getErrorMessage(), null);
    } catch (IllegalArgumentException e) {
      return new io.strata.common.exception.InternalException(r.getErrorCode() + ": " + r.getErrorMessage());
    }
  }

  private <T> T call(java.util.function.Function<BlockMasterWorkerServiceGrpc.BlockMasterWorkerServiceBlockingStub, T> c)
      throws StrataException {
    return master.call(ch -> c.apply(BlockMasterWorkerServiceGrpc.newBlockingStub(ch)
        .withDeadlineAfter(rpcTimeoutMs, TimeUnit.MILLISECONDS)));
  }
}
