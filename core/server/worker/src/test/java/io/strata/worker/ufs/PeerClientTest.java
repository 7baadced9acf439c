package io.strata.worker.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.InternalException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The worker-to-worker read against a fake peer over real gRPC: every chunk must come with its checksums, at the
 * next offset; a chunk without them (an old or broken peer) or at another offset is refused as a protocol error
 * (INTERNAL) before any of its bytes is passed on, never reported as a corrupt copy; bytes failing their checksums
 * and a peer answering DATA_LOSS about its own copy are a corrupt copy.
 */
class PeerClientTest {
  private static final int C = ChunkChecksums.CHUNK_BYTES;
  private static final long BLOCK_ID = 77L << 24;
  private final byte[] block = new byte[3 * C + 1000];
  /** Turns each message the honest peer would send (whole chunks with their checksums) into what it sends. */
  private final AtomicReference<Function<ReadBlockResponse, ReadBlockResponse>> tamper =
      new AtomicReference<>(Function.identity());
  /** When set, the peer fails the read with this instead. */
  private final AtomicReference<Throwable> failWith = new AtomicReference<>();
  private Server server;
  private PeerClient peers;
  private WorkerAddress peer;

  @BeforeEach
  void setUp() throws Exception {
    new Random(5).nextBytes(block);
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(new BlockWorkerServiceGrpc.BlockWorkerServiceImplBase() {
          @Override
          public void readBlock(ReadBlockRequest req, StreamObserver<ReadBlockResponse> out) {
            assertThat(req.getChecksums()).as("the copy asks for checksums").isTrue();
            if (failWith.get() != null) {
              out.onError(GrpcErrors.toStatus(failWith.get()));
              return;
            }
            // As BlockReadCall sends them: two checksum chunks per message, each message with its offset.
            for (int at = 0; at < block.length; at += 2 * C) {
              int n = Math.min(2 * C, block.length - at);
              ReadBlockResponse.Builder r = ReadBlockResponse.newBuilder().setOffset(at)
                  .setChunk(ByteString.copyFrom(block, at, n));
              ChunkChecksums.Builder sums = new ChunkChecksums.Builder();
              sums.update(block, at, n);
              sums.finish();
              for (int i = 0; i < ChunkChecksums.chunkCount(n); i++) {
                r.addChunkCrc32C(sums.get(i));
              }
              out.onNext(tamper.get().apply(r.build()));
            }
            out.onCompleted();
          }
        }).build().start();
    peer = new WorkerAddress("127.0.0.1", server.getPort());
    peers = new PeerClient(8 << 20, 10_000);
  }

  @AfterEach
  void tearDown() {
    peers.close();
    server.shutdownNow();
  }

  private byte[] read(ByteArrayOutputStream got) throws Exception {
    peers.read(peer, BLOCK_ID, block.length, chunk -> {
      byte[] b = new byte[chunk.remaining()];
      chunk.get(b);
      got.write(b);
    });
    return got.toByteArray();
  }

  @Test
  void honestPeer_isCopiedWhole() throws Exception {
    assertThat(read(new ByteArrayOutputStream())).isEqualTo(block);
  }

  @Test
  void chunkWithoutChecksums_isRefusedAsAProtocolError_beforeAnyByteIsTaken() {
    tamper.set(r -> r.toBuilder().clearChunkCrc32C().build());
    ByteArrayOutputStream got = new ByteArrayOutputStream();

    assertThatThrownBy(() -> read(got)).isInstanceOf(InternalException.class)
        .isNotInstanceOf(DataLossException.class)
        .hasMessageContaining("Reading block " + BLOCK_ID + " from worker " + peer)
        .hasMessageContaining("without the checksums asked for");
    assertThat(got.size()).isZero();
  }

  @Test
  void laterChunkWithoutChecksums_isRefused_afterOnlyTheVerifiedBytes() {
    // The first message is whole and honest; the second comes without its checksums and with a byte changed.
    tamper.set(r -> r.getOffset() == 0 ? r : r.toBuilder().clearChunkCrc32C()
        .setChunk(flipped(r.getChunk(), 3)).build());
    ByteArrayOutputStream got = new ByteArrayOutputStream();

    assertThatThrownBy(() -> read(got)).isInstanceOf(InternalException.class)
        .hasMessageContaining("sent " + (C + 1000) + " bytes at offset " + 2 * C + " without the checksums");
    assertThat(got.toByteArray()).isEqualTo(java.util.Arrays.copyOf(block, 2 * C));
  }

  @Test
  void chunkAtAnotherOffset_isAProtocolError_notACorruptCopy() {
    tamper.set(r -> r.getOffset() == 0 ? r : r.toBuilder().setOffset(r.getOffset() + C).build());
    ByteArrayOutputStream got = new ByteArrayOutputStream();

    assertThatThrownBy(() -> read(got)).isInstanceOf(InternalException.class)
        .hasMessageContaining("broke the read protocol")
        .hasMessageContaining("at offset " + 3 * C + " with 2 checksums where offset " + 2 * C + " with 2 checksums");
    assertThat(got.size()).isEqualTo(2 * C);
  }

  @Test
  void chunkWithTooFewChecksums_isAProtocolError() {
    tamper.set(r -> ReadBlockResponse.newBuilder().setOffset(r.getOffset()).setChunk(r.getChunk())
        .addChunkCrc32C(r.getChunkCrc32C(0)).build());

    assertThatThrownBy(() -> read(new ByteArrayOutputStream())).isInstanceOf(InternalException.class)
        .hasMessageContaining("with 1 checksums where offset 0 with 2 checksums");
  }

  @Test
  void bytesFailingTheirChecksums_areACorruptCopy_atTheBadChunk() {
    tamper.set(r -> r.getOffset() == 0 ? r : r.toBuilder().setChunk(flipped(r.getChunk(), C + 5)).build());
    ByteArrayOutputStream got = new ByteArrayOutputStream();

    assertThatThrownBy(() -> read(got)).isInstanceOfSatisfying(CorruptBlockException.class, e -> {
      assertThat(e.blockId()).isEqualTo(BLOCK_ID);
      assertThat(e.worker()).isEqualTo(peer.toString());
      assertThat(e.offset()).isEqualTo(3L * C);
    });
    assertThat(got.size()).isEqualTo(2 * C);
  }

  @Test
  void peerAnsweringDataLossAboutItsOwnCopy_isACorruptCopy() {
    failWith.set(new CorruptBlockException(BLOCK_ID, "", 0, "its checksums cannot be read (no sidecar)"));

    assertThatThrownBy(() -> read(new ByteArrayOutputStream())).isInstanceOfSatisfying(CorruptBlockException.class,
        e -> assertThat(e.worker()).isEqualTo(peer.toString()))
        .hasMessageContaining("its checksums cannot be read");
  }

  @Test
  void peerWithoutTheBlock_isNotACorruptCopy() {
    failWith.set(new NotFoundException("Block " + BLOCK_ID + " does not exist on this worker"));

    assertThatThrownBy(() -> read(new ByteArrayOutputStream())).isInstanceOf(NotFoundException.class)
        .hasMessageContaining("does not exist on this worker");
  }

  private static ByteString flipped(ByteString chunk, int at) {
    byte[] b = chunk.toByteArray();
    b[at] ^= (byte) 0xff;
    return ByteString.copyFrom(b);
  }
}
