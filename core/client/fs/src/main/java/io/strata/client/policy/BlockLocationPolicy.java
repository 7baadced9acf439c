package io.strata.client.policy;

import io.strata.client.WorkerInfo;

/**
 * Chooses the worker for one block: the worker that receives a new block (the write policy,
 * {@code strata.user.block.write.location.policy}) or the worker that reads a block from the under file
 * system and caches it (the UFS read policy, {@code strata.user.ufs.block.read.location.policy}).
 *
 * <p>Pluggable: {@link BlockLocationPolicies#create} takes a short name ({@code LOCAL_FIRST} or
 * {@code LocalFirst}) or the name of a class implementing this interface with a public constructor taking a
 * {@link io.strata.common.conf.StrataConf} or none. An instance serves one client (one
 * {@code FileSystem}) and may be called from several threads at once: implementations must be thread-safe.
 */
public interface BlockLocationPolicy {
  /**
   * One of {@code request.workers()} (never empty; failed workers are already left out), or null when
   * none is acceptable to this policy (the caller then fails naming the policy).
   */
  WorkerInfo choose(BlockLocationRequest request);
}
