package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.InvalidPathException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.id.BlockId;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.WorkerAddressProto;
import io.strata.proto.WriteBlockHeader;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import java.io.IOException;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every kind of bad input, sent both through the client and as raw gRPC messages that bypass the
 * client's own checks: each gets its clear error, and after each the servers still serve.
 */
class BadInputIntegrationTest {
  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static ManagedChannel masterChannel;
  private static ManagedChannel workerChannel;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).build().start();
    fs = cluster.client();
    masterChannel = GrpcChannels.forAddress("localhost", cluster.masterPort(), 64 << 20);
    workerChannel = GrpcChannels.forAddress("localhost", cluster.worker(0).rpcPort(), 64 << 20);
  }

  @AfterAll
  static void stop() {
    GrpcChannels.close(masterChannel);
    GrpcChannels.close(workerChannel);
    cluster.close();
  }

  /** After every bad input, a normal write and read still work. */
  @AfterEach
  void serversStillServe() throws IOException {
    String path = "/alive-" + System.nanoTime();
    try (FileOutStream out = fs.createFile(path)) {
      out.write(new byte[] {1, 2, 3});
    }
    try (FileInStream in = fs.openFile(path)) {
      assertThat(in.readAllBytes()).containsExactly(1, 2, 3);
    }
  }

  private static FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub master() {
    return FileSystemMasterServiceGrpc.newBlockingStub(masterChannel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static BlockWorkerServiceGrpc.BlockWorkerServiceBlockingStub worker() {
    return BlockWorkerServiceGrpc.newBlockingStub(workerChannel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  /** The error a raw gRPC call fails with, as the client's exception family (fails when the call succeeds). */
  static StrataException rawError(Runnable call) {
    try {
      call.run();
    } catch (StatusRuntimeException e) {
      return GrpcErrors.fromThrowable(e);
    }
    throw new AssertionError("the call succeeded");
  }

  /**
   * Owners and client ids are bounded (256 characters, no control characters) and refused INVALID_ARGUMENT before
   * anything changes. Before, one recursive create of a deep path with a 1.5 MB owner (kept twice on each of the
   * thousand directories it made) made a journal batch past what one buffer holds: the journal failed for good and
   * the master stepped down; and a huge client id in request ids was kept a thousand times over.
   */
  @Test
  void hugeOwnersAndClientIds_areRefused_andTheMasterKeepsLeading() throws Exception {
    String deep = "/deep" + "/a".repeat(1000) + "/f";
    String owner = "u".repeat(1_500_000);
    StrataException e = rawError(() -> master().createFile(CreateFileRequest.newBuilder().setPath(deep)
        .setBlockSize(1 << 20).setRecursive(true).setOwner(owner).build()));
    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(e.getMessage()).contains("owner").contains("1500000 characters");
    assertThat(fs.exists("/deep")).as("nothing was made").isFalse();
    StrataException ctrl = rawError(() -> master().createFile(CreateFileRequest.newBuilder().setPath("/ctrl-owner")
        .setBlockSize(1 << 20).setOwner("bad\nowner").build()));
    assertThat(ctrl.getMessage()).contains("control character");
    StrataException requestId = rawError(() -> master().rename(io.strata.proto.RenameRequest.newBuilder()
        .setSrc("/nowhere").setDst("/elsewhere").setRequestId(io.strata.proto.RequestIdProto.newBuilder()
            .setClientId("c".repeat(7_000_000)).setCallId(1)).build()));
    assertThat(requestId.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(requestId.getMessage()).contains("client id");
    StrataException renew = rawError(() -> master().renewLease(io.strata.proto.RenewLeaseRequest.newBuilder()
        .setClientId("c".repeat(1000)).build()));
    assertThat(renew.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(cluster.master().isLeading()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "relative/path", "/trailing/", "/a//b", "/a/./b", "/a/../b", "/ctrl\u0001char",
      "/del\u007f"})
  void pathRuleViolations_areInvalidPath_fromClientAndServer(String path) {
    assertThatThrownBy(() -> fs.createFile(path)).isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("ath");
    StrataException server = rawError(() -> master().createFile(CreateFileRequest.newBuilder().setPath(path)
        .setBlockSize(1024).build()));
    assertThat(server).isInstanceOf(InvalidPathException.class);
    assertThat(server.code()).isEqualTo(ErrorCode.INVALID_PATH);
    if (!path.isEmpty()) {
      assertThat(server.getMessage()).contains(path.substring(0, Math.min(path.length(), 5)));
    }
  }

  @Test
  void overlongPathAndComponent_areRejectedNamingTheLimit() {
    String longPath = "/" + "a".repeat(5000);
    assertThat(rawError(() -> master().getStatus(GetStatusRequest.newBuilder().setPath(longPath).build())))
        .isInstanceOf(InvalidPathException.class).hasMessageContaining("4096");
    String longName = "/" + "b".repeat(300);
    assertThat(rawError(() -> master().getStatus(GetStatusRequest.newBuilder().setPath(longName).build())))
        .isInstanceOf(InvalidPathException.class).hasMessageContaining("255");
  }

  @Test
  void readingPastEof_andNegativeOffsets_getClearErrors() throws IOException {
    try (FileOutStream out = fs.createFile("/eof", CreateFileOptions.defaults().withBlockSize(65_536))) {
      out.write(new byte[160_000]);
    }
    try (FileInStream in = fs.openFile("/eof")) {
      assertThat(in.positionedRead(160_000, new byte[10], 0, 10)).isEqualTo(-1);
      assertThat(in.positionedRead(159_995, new byte[10], 0, 10)).isEqualTo(5);
      assertThatThrownBy(() -> in.readFully(159_995, new byte[10], 0, 10)).isInstanceOf(OutOfRangeException.class)
          .hasMessageContaining("160000 bytes");
      assertThatThrownBy(() -> in.seek(160_001)).isInstanceOf(OutOfRangeException.class);
      assertThatThrownBy(() -> in.seek(-1)).isInstanceOf(InvalidArgumentException.class)
          .hasMessageContaining("negative");
      assertThatThrownBy(() -> in.positionedRead(-7, new byte[1], 0, 1)).isInstanceOf(InvalidArgumentException.class);
    }
    long blockId = BlockId.of(fs.getStatus("/eof").id(), 0);
    assertThat(rawError(() -> drain(worker().readBlock(ReadBlockRequest.newBuilder().setBlockId(blockId)
        .setOffset(-1).setLength(10).build())))).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("negative read offset");
    assertThat(rawError(() -> drain(worker().readBlock(ReadBlockRequest.newBuilder().setBlockId(blockId)
        .setOffset(65_530).setLength(20).build())))).isInstanceOf(OutOfRangeException.class)
        .hasMessageContaining("65536 bytes");
    assertThat(rawError(() -> drain(worker().readBlock(ReadBlockRequest.newBuilder().setBlockId(blockId)
        .setOffset(0).setLength(Long.MAX_VALUE).build())))).isInstanceOf(OutOfRangeException.class);
    assertThat(rawError(() -> drain(worker().readBlock(ReadBlockRequest.newBuilder().setBlockId(blockId)
        .setOffset(Long.MAX_VALUE).setLength(Long.MAX_VALUE).build())))).isInstanceOf(OutOfRangeException.class);
  }

  private static long drain(Iterator<ReadBlockResponse> it) {
    long n = 0;
    while (it.hasNext()) {
      n += it.next().getChunk().size();
    }
    return n;
  }

  @Test
  void blockThatDoesNotExist_isNotFound_forRead() {
    assertThat(rawError(() -> drain(worker().readBlock(ReadBlockRequest.newBuilder().setBlockId(987654321L)
        .setLength(1).build())))).isInstanceOf(NotFoundException.class).hasMessageContaining("987654321");
  }

  @Test
  void aWorkerServesNoBlockRemovalToClients_andTheBlockStays() throws Exception {
    // The call an older worker served (strata.BlockWorkerService/RemoveBlock, field 1 = the block id): any
    // client could delete the only copy of a file. Now only the master's heartbeat reply removes blocks.
    try (FileOutStream out = fs.createFile("/kept", CreateFileOptions.defaults().withWriteType(
        io.strata.client.options.WriteType.MUST_CACHE))) {
      out.write(new byte[] {1, 2, 3});
    }
    long blockId = fs.getBlockLocations("/kept").get(0).blockId();
    io.grpc.MethodDescriptor<byte[], byte[]> removal = io.grpc.MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
        .setFullMethodName("strata.BlockWorkerService/RemoveBlock")
        .setRequestMarshaller(RawBytes.INSTANCE).setResponseMarshaller(RawBytes.INSTANCE).build();
    java.io.ByteArrayOutputStream req = new java.io.ByteArrayOutputStream();
    com.google.protobuf.CodedOutputStream c = com.google.protobuf.CodedOutputStream.newInstance(req);
    c.writeInt64(1, blockId);
    c.flush();
    io.grpc.StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(
        io.grpc.StatusRuntimeException.class, () -> io.grpc.stub.ClientCalls.blockingUnaryCall(workerChannel,
            removal, io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), req.toByteArray()));
    assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNIMPLEMENTED);
    // What holds the bytes: the worker's copy, still there and read back.
    try (var in = fs.openFile("/kept")) {
      assertThat(in.readAllBytes()).containsExactly(1, 2, 3);
    }
  }

  /** A marshaller of raw bytes, for a call no generated stub has. */
  private enum RawBytes implements io.grpc.MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public java.io.InputStream stream(byte[] value) {
      return new java.io.ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(java.io.InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  @Test
  void writeToCompletedFile_isRefused_atEveryLevel() throws Exception {
    try (FileOutStream out = fs.createFile("/done", CreateFileOptions.defaults().withBlockSize(65_536))) {
      out.write(new byte[100]);
    }
    long fileId = fs.getStatus("/done").id();
    assertThatThrownBy(() -> fs.createFile("/done")).isInstanceOf(AlreadyExistsException.class)
        .hasMessageContaining("/done");
    assertThat(rawError(() -> master().completeFile(CompleteFileRequest.newBuilder().setPath("/done")
        .setLength(100).build()))).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("already complete");
    // A new block for the complete file: the worker writes it, the master refuses the commit, the
    // worker drops it.
    StrataException e = rawWrite(BlockId.of(fileId, 1), 4096, new byte[10]);
    assertThat(e).isInstanceOf(FailedPreconditionException.class).hasMessageContaining("already complete");
    assertThat(cluster.worker(0).store().committedBlocks()).noneMatch(b -> b.blockId() == BlockId.of(fileId, 1));
    // The existing block again: it is already on this worker.
    assertThat(rawWrite(BlockId.of(fileId, 0), 4096, new byte[10])).isInstanceOf(AlreadyExistsException.class);
    // A block of a file that does not exist.
    assertThat(rawWrite(BlockId.of(999_999, 0), 4096, new byte[10])).isInstanceOf(NotFoundException.class)
        .hasMessageContaining("does not exist");
  }

  /** Writes one block with raw messages; returns the error (fails if the write succeeds). */
  private static StrataException rawWrite(long blockId, long maxLength, byte[] data, WriteBlockRequest... extra)
      throws Exception {
    WriteBlockRequest first = WriteBlockRequest.newBuilder().setHeader(WriteBlockHeader.newBuilder()
        .setBlockId(blockId).setMaxLength(maxLength)).setChunk(ByteString.copyFrom(data)).build();
    WriteBlockRequest[] all = new WriteBlockRequest[extra.length + 1];
    all[0] = first;
    System.arraycopy(extra, 0, all, 1, extra.length);
    return rawWriteError(workerChannel, blockId, all);
  }

  /**
   * Sends {@code requests} in order as one WriteBlock call on {@code channel}, half-closes, and returns the
   * error the worker answered with (fails if the write succeeds). Shared by the raw-gRPC tests.
   */
  static StrataException rawWriteError(io.grpc.Channel channel, long blockId, WriteBlockRequest... requests)
      throws Exception {
    CompletableFuture<WriteBlockResponse> result = new CompletableFuture<>();
    StreamObserver<WriteBlockRequest> req = BlockWorkerServiceGrpc.newStub(channel).writeBlock(
        new StreamObserver<>() {
          @Override
          public void onNext(WriteBlockResponse value) {
            result.complete(value);
          }

          @Override
          public void onError(Throwable t) {
            result.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
            result.complete(null);
          }
        });
    for (WriteBlockRequest r : requests) {
      req.onNext(r);
    }
    req.onCompleted();
    try {
      result.get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException ex) {
      return GrpcErrors.fromThrowable(ex.getCause());
    }
    throw new AssertionError("the write of block " + blockId + " succeeded");
  }

  @Test
  void absurdLengths_areRefused_withTheirLimits() throws Exception {
    assertThat(rawError(() -> master().createFile(CreateFileRequest.newBuilder().setPath("/absurd")
        .setBlockSize(Long.MAX_VALUE).build()))).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("block size");
    assertThat(rawError(() -> master().createFile(CreateFileRequest.newBuilder().setPath("/absurd")
        .setBlockSize(-5).build()))).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("must be positive");
    // Tiny blocks are refused, naming the key: each block costs a master call and a worker block.
    assertThat(rawError(() -> master().createFile(CreateFileRequest.newBuilder().setPath("/absurd")
        .setBlockSize(100).build()))).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("block size 100 is smaller than the limit 65536 (strata.master.block.size.min)");
    assertThat(fs.exists("/absurd")).isFalse();

    // An open writer keeps /absurd2 incomplete (cancel would delete it).
    io.strata.client.FileOutStream open = fs.createFile("/absurd2", CreateFileOptions.defaults().withBlockSize(65_536));
    long fileId = fs.getStatus("/absurd2").id();
    // Completing with a length the blocks do not have.
    assertThat(rawError(() -> master().completeFile(CompleteFileRequest.newBuilder().setPath("/absurd2")
        .setLength(Long.MAX_VALUE).build()))).isInstanceOf(InvalidArgumentException.class);
    assertThat(rawError(() -> master().completeFile(CompleteFileRequest.newBuilder().setPath("/absurd2")
        .setLength(-1).build()))).isInstanceOf(InvalidArgumentException.class);
    assertThat(rawError(() -> master().completeFile(CompleteFileRequest.newBuilder().setPath("/absurd2")
        .setLength(5000).build()))).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("never committed");
    // Block headers with impossible lengths, and more data than the header allows.
    assertThat(rawWrite(BlockId.of(fileId, 0), -5, new byte[1])).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("must be positive");
    assertThat(rawWrite(BlockId.of(fileId, 0), 10, new byte[11])).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("past its declared maximum");
    assertThat(rawWrite(BlockId.of(fileId, 0), 1L << 40, new byte[1])).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("capacity");
    assertThat(rawWrite(-3, 10, new byte[1])).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("negative");
    // A message over the server's limit (8 MiB by default) is refused by gRPC itself.
    StrataException big = rawWrite(BlockId.of(fileId, 0), 1024, new byte[9 << 20]);
    assertThat(big.code()).isEqualTo(ErrorCode.RESOURCE_EXHAUSTED);
    // A second header in the same stream.
    assertThat(rawWrite(BlockId.of(fileId, 0), 1024, new byte[1], WriteBlockRequest.newBuilder()
        .setHeader(WriteBlockHeader.newBuilder().setBlockId(1).setMaxLength(1)).build()))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("only the first message");
    // Nothing of these writes remains on the worker.
    assertThat(cluster.worker(0).store().committedBlocks()).noneMatch(b -> BlockId.fileId(b.blockId()) == fileId);
    open.cancel();
    assertThat(fs.exists("/absurd2")).as("a cancelled write leaves nothing visible").isFalse();
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 65536, 70000})
  void registeringAWebPortThatIsNoPort_isInvalid_namingIt(int webPort) throws IOException {
    var stub = BlockMasterWorkerServiceGrpc.newBlockingStub(masterChannel).withDeadlineAfter(10, TimeUnit.SECONDS);
    StrataException e = rawError(() -> stub.registerWorker(RegisterWorkerRequest.newBuilder().setAddress(
        WorkerAddressProto.newBuilder().setHost("localhost").setRpcPort(1).setWebPort(webPort)).build()));
    assertThat(e).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("localhost:1")
        .hasMessageContaining("web port " + webPort + ", not in 0-65535");
    assertThat(fs.getClusterInfo().liveWorkers()).as("the bad worker is not registered").isEqualTo(1);
  }

  @Test
  void registeringMoreStorageDirsThanAnyMachineHas_isInvalid() throws IOException {
    var stub = BlockMasterWorkerServiceGrpc.newBlockingStub(masterChannel).withDeadlineAfter(10, TimeUnit.SECONDS);
    RegisterWorkerRequest.Builder r = RegisterWorkerRequest.newBuilder()
        .setAddress(WorkerAddressProto.newBuilder().setHost("localhost").setRpcPort(2));
    for (int i = 0; i < 1025; i++) {
      r.addDirs(io.strata.proto.StorageDirProto.newBuilder().setPath("/d" + i));
    }
    StrataException e = rawError(() -> stub.registerWorker(r.build()));
    assertThat(e).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("registers 1025 storage dirs")
        .hasMessageContaining("at most 1024");
    assertThat(fs.getClusterInfo().liveWorkers()).as("the bad worker is not registered").isEqualTo(1);
  }

  @Test
  void writeWithoutHeader_isInvalid() {
    CompletableFuture<Throwable> err = new CompletableFuture<>();
    StreamObserver<WriteBlockRequest> req = BlockWorkerServiceGrpc.newStub(workerChannel).writeBlock(
        new StreamObserver<>() {
          @Override
          public void onNext(WriteBlockResponse value) {}

          @Override
          public void onError(Throwable t) {
            err.complete(t);
          }

          @Override
          public void onCompleted() {
            err.complete(null);
          }
        });
    req.onNext(WriteBlockRequest.newBuilder().setChunk(ByteString.copyFromUtf8("no header")).build());
    req.onCompleted();
    Throwable t = err.join();
    assertThat(t).isInstanceOf(StatusRuntimeException.class);
    assertThat(((StatusRuntimeException) t).getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(GrpcErrors.fromThrowable(t)).hasMessageContaining("header");
  }

  @Test
  void openingIncompleteFileOrDirectory_isFailedPrecondition() throws IOException {
    FileOutStream open = fs.createFile("/incomplete");
    open.write(new byte[10]);
    assertThatThrownBy(() -> fs.openFile("/incomplete")).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("not complete");
    open.close();
    assertThat(fs.getStatus("/incomplete").length()).isEqualTo(10);
    assertThatThrownBy(() -> fs.openFile("/")).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("directory");
    assertThatThrownBy(() -> fs.openFile("/nope")).isInstanceOf(NotFoundException.class);
  }

  @Test
  void namespaceMisuse_getsTheRightErrors() throws IOException {
    fs.createFile("/plainfile").close();
    assertThatThrownBy(() -> fs.createFile("/plainfile/child")).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("is a file");
    assertThatThrownBy(() -> fs.createDirectory("/missing/parent/dir")).isInstanceOf(NotFoundException.class)
        .hasMessageContaining("parent directory /missing does not exist");
    assertThatThrownBy(() -> fs.delete("/")).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> fs.rename("/", "/x")).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> fs.rename("/nope", "/x")).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> fs.rename("/plainfile", "/nodir/x")).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> fs.delete("/nope")).isInstanceOf(NotFoundException.class);
  }
}
