package io.strata.worker.rpc;

import io.strata.common.grpc.BlockDataMarshalling;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.UfsOperations;

/**
 * What the data service's calls share: {@link BlockWorkerService} makes one and hands it to each
 * {@link BlockWriteCall}, {@link BlockReadCall} and {@link UfsWriteCall} it starts.
 *
 * <p>Thread-safe: every part is (the store, the committer, the UFS layer, the watches, the marshalling's
 * parse counters, the pool and the byte counter), and the record itself is immutable.
 *
 * @param store the block store calls read and write
 * @param committer how a finished block write is committed, locally then at the master
 * @param ufs the under file system layer (reads through, file writes)
 * @param stallWatch ends block reads whose reader takes no data for its timeout
 * @param ufsWriteWatch ends UFS file writes that receive no message (data or keep-alive) for its timeout
 * @param ufsWrites the UFS file writes open now, by file, which a lease recovery ends
 * @param marshalling the zero-copy marshallers; block writes release their aliased chunks to it
 * @param pool the direct buffers zero-copy block reads fill and lend to gRPC
 * @param streamed block bytes sent by ReadBlock and received by WriteBlock streams, per listener
 */
record CallResources(BlockStore store, Committer committer, UfsOperations ufs, IdleWatch stallWatch,
    IdleWatch ufsWriteWatch, UfsWrites ufsWrites, BlockDataMarshalling marshalling, DirectBufferPool pool,
    StreamedBytes streamed) {
}
