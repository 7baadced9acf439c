package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.UnavailableException;
import io.strata.proto.BlockInfoProto;
import io.strata.proto.BlockLocationProto;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.CacheBlockResponse;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CompleteFileResponse;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.CreateFileResponse;
import io.strata.proto.DeleteRequest;
import io.strata.proto.DeleteResponse;
import io.strata.proto.FileBlockInfoProto;
import io.strata.proto.FileInfoProto;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetStatusResponse;
import io.strata.proto.GetWorkersRequest;
import io.strata.proto.GetWorkersResponse;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WorkerAddressProto;
import io.strata.proto.WorkerInfoProto;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's write and read types against one fake server that plays both the master and a worker
 * (registered as "localhost:port"; locations may name it "127.0.0.1:port", a host that is not local to
 * the client). The fakes record what the client sent, so the tests check the protocol, not a cluster.
 */
class WriteAndReadTypesTest {
  private static final int BLOCK = 1024;

  private Server server;
  private int port;
  private FileSystem fs;
  private final List<CreateFileRequest> creates = new CopyOnWriteArrayList<>();
  private final List<String> deletes = new CopyOnWriteArrayList<>();
  private final List<CompleteFileRequest> completes = new CopyOnWriteArrayList<>();
  private final List<String> blockWrites = new CopyOnWriteArrayList<>(); // "<blockId>:<bytes>" or "<id>:cancelled"
  private final ByteArrayOutputStream ufsBytes = new ByteArrayOutputStream();
  private final List<String> ufsEvents = new CopyOnWriteArrayList<>();
  private final List<ReadBlockRequest> reads = new CopyOnWriteArrayList<>();
  private final BlockingQueue<Long> cacheRequests = new LinkedBlockingQueue<>();
  private volatile boolean failUfsWrites;
  private volatile FileInfoProto statusToReturn;

  @BeforeEach
  void start() throws Exception {
    server = NettyServerBuilder.forPort(0).addService(new Master()).addService(new Worker()).build().start();
    port = server.getPort();
    fs = FileSystem.create(StrataConf.of(Map.of("strata.master.hostname", "localhost",
        "strata.master.rpc.port", Integer.toString(port), "strata.network.rpc.timeout", "10s",
        "strata.user.stream.chunk.size", "1KB", "strata.user.hostname", "localhost")));
  }

  @AfterEach
  void stop() throws Exception {
    fs.close();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private final class Master extends FileSystemMasterServiceGrpc.FileSystemMasterServiceImplBase {
    @Override
    public void createFile(CreateFileRequest r, StreamObserver<CreateFileResponse> out) {
      creates.add(r);
      out.onNext(CreateFileResponse.newBuilder().setFile(FileInfoProto.newBuilder().setId(3).setPath(r.getPath())
          .setBlockSize(r.getBlockSize())).build());
      out.onCompleted();
    }

    @Override
    public void completeFile(CompleteFileRequest r, StreamObserver<CompleteFileResponse> out) {
      completes.add(r);
      out.onNext(CompleteFileResponse.getDefaultInstance());
      out.onCompleted();
    }

    @Override
    public void delete(DeleteRequest r, StreamObserver<DeleteResponse> out) {
      deletes.add(r.getPath());
      out.onNext(DeleteResponse.getDefaultInstance());
      out.onCompleted();
    }

    @Override
    public void getStatus(GetStatusRequest r, StreamObserver<GetStatusResponse> out) {
      out.onNext(GetStatusResponse.newBuilder().setFile(statusToReturn).build());
      out.onCompleted();
    }

    @Override
    public void getWorkers(GetWorkersRequest r, StreamObserver<GetWorkersResponse> out) {
      out.onNext(GetWorkersResponse.newBuilder().addWorkers(WorkerInfoProto.newBuilder().setId(1)
          .setAddress(address("localhost")).setCapacityBytes(1 << 30)).build());
      out.onCompleted();
    }
  }

  private WorkerAddressProto address(String host) {
    return WorkerAddressProto.newBuilder().setHost(host).setRpcPort(port).build();
  }

  private final class Worker extends BlockWorkerServiceGrpc.BlockWorkerServiceImplBase {
    @Override
    public StreamObserver<WriteBlockRequest> writeBlock(StreamObserver<WriteBlockResponse> out) {
      return new StreamObserver<>() {
        long id = -1;
        long bytes;

        @Override
        public void onNext(WriteBlockRequest r) {
          if (r.hasHeader()) {
            id = r.getHeader().getBlockId();
          }
          bytes += r.getChunk().size();
        }

        @Override
        public void onError(Throwable t) {
          blockWrites.add(id + ":cancelled");
        }

        @Override
        public void onCompleted() {
          blockWrites.add(id + ":" + bytes);
          out.onNext(WriteBlockResponse.newBuilder().setLength(bytes).build());
          out.onCompleted();
        }
      };
    }

    @Override
    public StreamObserver<WriteUfsFileRequest> writeUfsFile(StreamObserver<WriteUfsFileResponse> out) {
      return new StreamObserver<>() {
        long bytes;

        @Override
        public void onNext(WriteUfsFileRequest r) {
          if (r.hasHeader()) {
            ufsEvents.add("file " + r.getHeader().getFileId());
          }
          if (failUfsWrites) {
            out.onError(Status.INTERNAL.withDescription("disk full").asRuntimeException());
            return;
          }
          synchronized (ufsBytes) {
            ufsBytes.write(r.getChunk().toByteArray(), 0, r.getChunk().size());
          }
          bytes += r.getChunk().size();
        }

        @Override
        public void onError(Throwable t) {
          ufsEvents.add("cancelled");
        }

        @Override
        public void onCompleted() {
          ufsEvents.add("closed " + bytes);
          out.onNext(WriteUfsFileResponse.newBuilder().setLength(bytes).build());
          out.onCompleted();
        }
      };
    }

    @Override
    public void readBlock(ReadBlockRequest r, StreamObserver<ReadBlockResponse> out) {
      reads.add(r);
      byte[] data = new byte[(int) r.getLength()];
      for (int i = 0; i < data.length; i++) {
        data[i] = (byte) (r.getOffset() + i);
      }
      out.onNext(ReadBlockResponse.newBuilder().setChunk(ByteString.copyFrom(data)).build());
      out.onCompleted();
    }

    @Override
    public void cacheBlock(CacheBlockRequest r, StreamObserver<CacheBlockResponse> out) {
      cacheRequests.add(r.getBlockId());
      out.onNext(CacheBlockResponse.newBuilder().setAccepted(true).build());
      out.onCompleted();
    }
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (i * 7);
    }
    return b;
  }

  private CreateFileOptions type(WriteType t) {
    return CreateFileOptions.defaults().withBlockSize(BLOCK).withWriteType(t);
  }

  @Test
  void cacheThrough_writesEveryBlockAndTheUfsCopy_thenCompletes() throws Exception {
    byte[] data = bytes(2 * BLOCK + 100);
    try (FileOutStream out = fs.createFile("/m/f", type(WriteType.CACHE_THROUGH))) {
      out.write(data);
    }
    assertThat(creates).singleElement().extracting(CreateFileRequest::getWriteType).isEqualTo("CACHE_THROUGH");
    long first = io.strata.common.id.BlockId.of(3, 0);
    assertThat(blockWrites).containsExactly(first + ":1024", (first + 1) + ":1024", (first + 2) + ":100");
    assertThat(ufsEvents).containsExactly("file 3", "closed " + data.length);
    assertThat(ufsBytes.toByteArray()).isEqualTo(data);
    assertThat(completes).singleElement().extracting(CompleteFileRequest::getLength).isEqualTo((long) data.length);
    assertThat(deletes).isEmpty();
  }

  @Test
  void through_writesOnlyTheUfsCopy_evenWhenEmpty() throws Exception {
    fs.createFile("/m/empty", type(WriteType.THROUGH)).close();
    assertThat(blockWrites).isEmpty();
    assertThat(ufsEvents).containsExactly("file 3", "closed 0");
    assertThat(completes).hasSize(1);
  }

  @Test
  void unsetWriteType_isTheConfiguredDefault_asyncThrough_whichWritesNoUfsCopy() throws Exception {
    try (FileOutStream out = fs.createFile("/m/a", CreateFileOptions.defaults().withBlockSize(BLOCK))) {
      assertThat(out.writeType()).isEqualTo(WriteType.ASYNC_THROUGH);
      out.write(bytes(10));
    }
    assertThat(creates).singleElement().extracting(CreateFileRequest::getWriteType).isEqualTo("ASYNC_THROUGH");
    assertThat(ufsEvents).isEmpty();
    assertThat(blockWrites).hasSize(1);
  }

  @Test
  void aFailedUfsStream_cancelsTheBlockInProgress_andDeletesTheFile() throws Exception {
    failUfsWrites = true;
    FileOutStream out = fs.createFile("/m/bad", type(WriteType.CACHE_THROUGH));
    assertThatThrownBy(() -> {
      for (int i = 0; i < 64; i++) {
        out.write(bytes(BLOCK / 2));
      }
      out.close();
    }).isInstanceOf(io.strata.common.exception.StrataException.class)
        .hasMessageContaining("under file system copy of /m/bad").hasMessageContaining("disk full");
    assertThat(deletes).containsExactly("/m/bad");
    assertThat(completes).isEmpty();
    // The block being written when the failure came was cancelled, never committed by a half-close.
    assertThat(blockWrites.get(blockWrites.size() - 1)).endsWith(":cancelled");
  }

  @Test
  void cancel_deletesTheFile_andCancelsBothStreams() throws Exception {
    FileOutStream out = fs.createFile("/m/c", type(WriteType.CACHE_THROUGH));
    out.write(bytes(100));
    out.write(bytes(BLOCK)); // the first chunk is full: both streams are open
    out.cancel();
    assertThat(deletes).containsExactly("/m/c");
    assertThat(completes).isEmpty();
    out.close(); // harmless after cancel, and completes nothing
    assertThat(completes).isEmpty();
  }

  private FileInfoProto file(String persistence, List<BlockLocationProto> locations) {
    return FileInfoProto.newBuilder().setId(4).setPath("/m/r").setLength(BLOCK + 10).setBlockSize(BLOCK)
        .setComplete(true).setPersistenceState(persistence)
        .addBlocks(FileBlockInfoProto.newBuilder().setOffset(0).setBlock(BlockInfoProto.newBuilder()
            .setBlockId(100).setLength(BLOCK).addAllLocations(locations)))
        .addBlocks(FileBlockInfoProto.newBuilder().setOffset(BLOCK).setBlock(BlockInfoProto.newBuilder()
            .setBlockId(101).setLength(10)))
        .build();
  }

  private byte[] readAll(ReadType type) throws Exception {
    try (FileInStream in = fs.openFile("/m/r", type == null ? OpenFileOptions.defaults()
        : OpenFileOptions.defaults().withReadType(type))) {
      return in.readAllBytes();
    }
  }

  @Test
  void aPersistedBlockOnNoWorker_isReadThroughTheLocalWorker_withUfsFallback() throws Exception {
    statusToReturn = file("PERSISTED", List.of());
    assertThat(readAll(null)).hasSize(BLOCK + 10);
    assertThat(reads).hasSize(2).allSatisfy(r -> {
      assertThat(r.getUfsFallback()).isTrue();
      assertThat(r.getNoCache()).isFalse();
      assertThat(r.getPromote()).isFalse();
    });
  }

  @Test
  void noCache_asksTheWorkerNotToCache_andPromoteIsPassedOn() throws Exception {
    statusToReturn = file("PERSISTED", List.of());
    readAll(ReadType.NO_CACHE);
    assertThat(reads).extracting(ReadBlockRequest::getNoCache).containsExactly(true, true);
    reads.clear();
    readAll(ReadType.CACHE_PROMOTE);
    assertThat(reads).extracting(ReadBlockRequest::getPromote).containsExactly(true, true);
    assertThat(reads).extracting(ReadBlockRequest::getNoCache).containsExactly(false, false);
  }

  @Test
  void aBlockOnNoWorker_ofAFileNotPersisted_failsUnavailable_namingFileAndBlock() throws Exception {
    statusToReturn = file("TO_BE_PERSISTED", List.of(BlockLocationProto.newBuilder().setWorkerId(1)
        .setAddress(address("localhost")).setTier("MEM").build()));
    try (FileInStream in = fs.openFile("/m/r")) {
      in.readNBytes(BLOCK); // block 100 has a location
      assertThatThrownBy(in::read).isInstanceOf(UnavailableException.class)
          .hasMessageContaining("Block 101 of /m/r").hasMessageContaining("TO_BE_PERSISTED");
    }
    assertThat(reads).singleElement().extracting(ReadBlockRequest::getUfsFallback).isEqualTo(false);
  }

  @Test
  void aBlockReadFromAnotherHost_isPassivelyCachedOnTheLocalWorker_butNotForNoCache() throws Exception {
    assertThat(readRemoteBlock(100, ReadType.CACHE)).hasSize(BLOCK);
    assertThat(cacheRequests.poll(10, TimeUnit.SECONDS)).isEqualTo(100L);
    readRemoteBlock(200, ReadType.NO_CACHE);
    readRemoteBlock(300, ReadType.CACHE); // a marker: the requests of one connection arrive in order
    assertThat(cacheRequests.poll(10, TimeUnit.SECONDS)).isEqualTo(300L);
    assertThat(cacheRequests).isEmpty();
    assertThat(reads).extracting(ReadBlockRequest::getBlockId).containsExactly(100L, 200L, 300L);
    assertThat(reads).allSatisfy(r -> assertThat(r.getUfsFallback()).isFalse());
  }

  @Test
  void aBlockReadFromTheLocalHost_isNotPassivelyCached() throws Exception {
    statusToReturn = oneBlockOn(100, "localhost");
    readAll(ReadType.CACHE);
    statusToReturn = oneBlockOn(300, "127.0.0.1");
    readAll(ReadType.CACHE);
    assertThat(cacheRequests.poll(10, TimeUnit.SECONDS)).isEqualTo(300L);
  }

  private FileInfoProto oneBlockOn(long blockId, String host) {
    BlockLocationProto loc = BlockLocationProto.newBuilder().setWorkerId(2).setAddress(address(host))
        .setTier("MEM").build();
    return FileInfoProto.newBuilder().setId(4).setPath("/m/r").setLength(BLOCK).setBlockSize(BLOCK)
        .setComplete(true).setPersistenceState("NOT_PERSISTED")
        .addBlocks(FileBlockInfoProto.newBuilder().setBlock(BlockInfoProto.newBuilder().setBlockId(blockId)
            .setLength(BLOCK).addLocations(loc)))
        .build();
  }

  private byte[] readRemoteBlock(long blockId, ReadType type) throws Exception {
    statusToReturn = oneBlockOn(blockId, "127.0.0.1");
    return readAll(type);
  }
}
