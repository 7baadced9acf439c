package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.StatusRuntimeException;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfoProto;
import io.strata.proto.FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub;
import io.strata.proto.RenameRequest;
import io.strata.proto.RequestIdProto;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Request ids at the RPC level against a real master (no client library in the way, so each call is sent
 * exactly as written): a create, complete, rename or delete sent again with the same request id gets its
 * first answer, also after the master restarted from its journal or from a checkpoint, while the same call
 * without the id (or with another) gets ALREADY_EXISTS or NOT_FOUND as before; the table keeps at most
 * {@code strata.master.request.ids.per.client.max} ids per client; the client library attaches an id to
 * each such call.
 */
class RequestIdIntegrationTest extends MasterRpcFixture {
  static RequestIdProto id(String client, long call) {
    return RequestIdProto.newBuilder().setClientId(client).setCallId(call).build();
  }

  static CreateFileRequest create(String path, RequestIdProto id) {
    CreateFileRequest.Builder b = CreateFileRequest.newBuilder().setPath(path).setBlockSize(1 << 20)
        .setRecursive(true);
    return (id == null ? b : b.setRequestId(id)).build();
  }

  /** The Strata exception a call failed with. */
  static Exception failure(Supplier<?> call) {
    try {
      call.get();
    } catch (StatusRuntimeException e) {
      return GrpcErrors.fromThrowable(e);
    }
    throw new AssertionError("the call succeeded");
  }

  @Test
  void retriedCalls_withTheSameRequestId_getTheFirstAnswer_whileCallsWithoutOneFailAsBefore() throws Exception {
    FileSystemMasterServiceBlockingStub m = start();
    m.createDirectory(CreateDirectoryRequest.newBuilder().setPath("/r").build());

    FileInfoProto created = m.createFile(create("/r/f", id("c1", 1))).getFile();
    FileInfoProto again = m.createFile(create("/r/f", id("c1", 1))).getFile();
    assertThat(again.getId()).isEqualTo(created.getId());
    assertThat(again.getPath()).isEqualTo("/r/f");
    assertThat(failure(() -> m.createFile(create("/r/f", null)))).isInstanceOf(AlreadyExistsException.class);
    // Same call number, another client: another call.
    assertThat(failure(() -> m.createFile(create("/r/f", id("c2", 1))))).isInstanceOf(AlreadyExistsException.class);

    CompleteFileRequest complete = CompleteFileRequest.newBuilder().setPath("/r/f").setFileId(created.getId())
        .setLength(0).setRequestId(id("c1", 2)).build();
    assertThat(m.completeFile(complete).getFile().getComplete()).isTrue();
    FileInfoProto completedAgain = m.completeFile(complete).getFile();
    assertThat(completedAgain.getComplete()).isTrue();
    assertThat(completedAgain.getId()).isEqualTo(created.getId());
    assertThat(failure(() -> m.completeFile(complete.toBuilder().clearRequestId().build())).getMessage())
        .contains("already complete");

    RenameRequest rename = RenameRequest.newBuilder().setSrc("/r/f").setDst("/r/g").setRequestId(id("c1", 3)).build();
    m.rename(rename);
    m.rename(rename);
    assertThat(failure(() -> m.rename(rename.toBuilder().clearRequestId().build())))
        .isInstanceOf(NotFoundException.class);

    DeleteRequest delete = DeleteRequest.newBuilder().setPath("/r/g").setRequestId(id("c1", 4)).build();
    m.delete(delete);
    m.delete(delete);
    assertThat(failure(() -> m.delete(delete.toBuilder().setRequestId(id("c1", 5)).build())))
        .isInstanceOf(NotFoundException.class);
    assertThat(cluster.master().fileSystemMaster().exists("/r/g")).isFalse();
    assertThat(cluster.master().fileSystemMaster().exists("/r/f")).isFalse();
  }

  @Test
  void requestIds_surviveARestartFromTheJournal_andFromACheckpoint() throws Exception {
    FileSystemMasterServiceBlockingStub m = start();
    long journaled = m.createFile(create("/j/f", id("c", 1))).getFile().getId();
    m.rename(RenameRequest.newBuilder().setSrc("/j/f").setDst("/j/g").setRequestId(id("c", 2)).build());

    cluster.restartMaster(); // replays the journal
    m = stub();
    assertThat(m.createFile(create("/j/f", id("c", 1))).getFile().getId()).isEqualTo(journaled);
    m.rename(RenameRequest.newBuilder().setSrc("/j/f").setDst("/j/g").setRequestId(id("c", 2)).build());
    long checkpointed = m.createFile(create("/k/f", id("c", 3))).getFile().getId();

    cluster.master().fileSystemMaster().checkpoint();
    cluster.restartMaster(); // loads the checkpoint (the ids are in it, not in a segment it replays)
    m = stub();
    assertThat(m.createFile(create("/k/f", id("c", 3))).getFile().getId()).isEqualTo(checkpointed);
    assertThat(m.createFile(create("/j/f", id("c", 1))).getFile().getId()).isEqualTo(journaled);
    assertThat(cluster.master().fileSystemMaster().requestIdCount()).isEqualTo(3);
    FileSystemMasterServiceBlockingStub last = m;
    assertThat(failure(() -> last.createFile(create("/k/f", id("c", 4))))).isInstanceOf(AlreadyExistsException.class);
  }

  @Test
  void theTable_keepsAtMostTheConfiguredIdsPerClient_droppingTheOldest() throws Exception {
    FileSystemMasterServiceBlockingStub m = start("strata.master.request.ids.per.client.max", "2");
    for (int i = 1; i <= 3; i++) {
      m.createFile(create("/b/f" + i, id("c", i)));
    }
    m.createFile(create("/b/other", id("d", 1)));
    assertThat(cluster.master().fileSystemMaster().requestIdCount()).isEqualTo(3); // c: 2 and 3; d: 1
    // The oldest of c's ids is gone: its retry runs again and finds the file.
    assertThat(failure(() -> m.createFile(create("/b/f1", id("c", 1))))).isInstanceOf(AlreadyExistsException.class);
    assertThat(m.createFile(create("/b/f2", id("c", 2))).getFile().getPath()).isEqualTo("/b/f2");
    assertThat(m.createFile(create("/b/f3", id("c", 3))).getFile().getPath()).isEqualTo("/b/f3");
    assertThat(m.createFile(create("/b/other", id("d", 1))).getFile().getPath()).isEqualTo("/b/other");
  }

  @Test
  void theClientLibrary_namesEachNonIdempotentCall_withARequestId() throws Exception {
    start();
    var fs = cluster.client();
    int before = cluster.master().fileSystemMaster().requestIdCount();
    fs.createFile("/lib/f", io.strata.client.options.CreateFileOptions.defaults().withRecursive(true)).close();
    fs.rename("/lib/f", "/lib/g");
    fs.delete("/lib/g");
    // create, complete, rename, delete: one id each.
    assertThat(cluster.master().fileSystemMaster().requestIdCount() - before).isEqualTo(4);
  }
}
