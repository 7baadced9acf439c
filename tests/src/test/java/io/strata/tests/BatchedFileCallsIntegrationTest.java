package io.strata.tests;

import static io.strata.tests.RequestIdIntegrationTest.create;
import static io.strata.tests.RequestIdIntegrationTest.failure;
import static io.strata.tests.RequestIdIntegrationTest.id;
import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.exception.InvalidArgumentException;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.FileResult;
import io.strata.proto.CompleteFilesRequest;
import io.strata.proto.CompleteFilesResponse;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFilesRequest;
import io.strata.proto.CreateFilesResponse;
import io.strata.proto.FileInfoProto;
import io.strata.proto.FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.PingRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The master's CreateFiles and CompleteFiles (many creates or completes in one call, as a shuffle's
 * registration and seal send them) at the RPC level against a real master: one result per entry in order,
 * a bad entry failing alone with its own error code, the changes durable (they survive a restart from the
 * journal), a retry with the same request ids answered from the first attempt, and bad calls (none, too
 * many, ufs_written, an unknown write type) refused whole with a clear error while the master keeps serving.
 */
class BatchedFileCallsIntegrationTest extends MasterRpcFixture {
  private static CompleteFileRequest complete(String path, long fileId, long length, long call) {
    return CompleteFileRequest.newBuilder().setPath(path).setFileId(fileId).setLength(length)
        .setRequestId(id("batch", call)).build();
  }

  @Test
  void eachEntry_getsItsOwnResultInOrder_durably_andARetryGetsTheFirstAnswers() throws Exception {
    FileSystemMasterServiceBlockingStub m = start();
    m.createDirectory(CreateDirectoryRequest.newBuilder().setPath("/c").build());
    List<FileInfoProto> made = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      made.add(m.createFile(create("/c/f" + i, id("maker", i))).getFile());
    }
    CompleteFilesRequest req = CompleteFilesRequest.newBuilder()
        .addFiles(complete("/c/f0", made.get(0).getId(), 0, 1))
        .addFiles(complete("/c/missing", 0, 0, 2))
        .addFiles(complete("/c/f1", made.get(1).getId(), 0, 3))
        .addFiles(complete("/c/f2", made.get(2).getId() + 12345, 0, 4)) // another file's id
        .addFiles(complete("no-slash", 0, 0, 5))
        .setIncludeBlocks(true).build();
    CompleteFilesResponse first = m.completeFiles(req);
    assertThat(first.getResultsCount()).isEqualTo(5);
    assertCompleted(first.getResults(0), "/c/f0", made.get(0).getId());
    assertThat(first.getResults(1).getErrorCode()).isEqualTo("NOT_FOUND");
    assertThat(first.getResults(1).getErrorMessage()).contains("/c/missing");
    assertCompleted(first.getResults(2), "/c/f1", made.get(1).getId());
    assertThat(first.getResults(3).getErrorCode()).isNotEmpty();
    assertThat(first.getResults(3).hasFile()).isFalse();
    assertThat(first.getResults(4).getErrorCode()).isEqualTo("INVALID_PATH");
    assertThat(first.getResults(4).getErrorMessage()).contains("no-slash");
    // The entry with another file's id completed nothing.
    assertThat(m.getStatus(GetStatusRequest.newBuilder().setPath("/c/f2").build()).getFile().getComplete()).isFalse();

    // Sent again (a client whose answer was lost): the completed ones answer as the first time, not
    // "already complete".
    CompleteFilesResponse again = m.completeFiles(req);
    assertCompleted(again.getResults(0), "/c/f0", made.get(0).getId());
    assertCompleted(again.getResults(2), "/c/f1", made.get(1).getId());
    assertThat(again.getResults(1).getErrorCode()).isEqualTo("NOT_FOUND");
    // Without the request ids, completing again is the usual error, per entry.
    CompleteFilesResponse bare = m.completeFiles(CompleteFilesRequest.newBuilder()
        .addFiles(req.getFiles(0).toBuilder().clearRequestId()).build());
    assertThat(bare.getResults(0).getErrorMessage()).contains("already complete");

    cluster.restartMaster(); // replays the journal: the completes were flushed before the answer
    m = stub();
    for (int i = 0; i < 2; i++) {
      FileInfoProto f = m.getStatus(GetStatusRequest.newBuilder().setPath("/c/f" + i).build()).getFile();
      assertThat(f.getComplete()).as("/c/f" + i + " after a restart").isTrue();
      assertThat(f.getId()).isEqualTo(made.get(i).getId());
    }
    assertThat(m.getStatus(GetStatusRequest.newBuilder().setPath("/c/f2").build()).getFile().getComplete()).isFalse();
  }

  private static void assertCompleted(FileResult r, String path, long id) {
    assertThat(r.getErrorCode()).as(path + ": " + r.getErrorMessage()).isEmpty();
    assertThat(r.getFile().getPath()).isEqualTo(path);
    assertThat(r.getFile().getId()).isEqualTo(id);
    assertThat(r.getFile().getComplete()).isTrue();
    assertThat(r.getFile().getLength()).isZero();
  }

  @Test
  void badCalls_areRefusedWhole_withAClearError_andTheMasterKeepsServing() throws Exception {
    FileSystemMasterServiceBlockingStub m = start();
    m.createDirectory(CreateDirectoryRequest.newBuilder().setPath("/b").build());
    FileInfoProto f = m.createFile(create("/b/f", id("maker", 1))).getFile();

    Exception none = failure(() -> m.completeFiles(CompleteFilesRequest.getDefaultInstance()));
    assertThat(none).isInstanceOf(InvalidArgumentException.class);
    assertThat(none.getMessage()).contains("1 to 1000 files, not 0");

    CompleteFilesRequest.Builder many = CompleteFilesRequest.newBuilder();
    for (int i = 0; i <= 1000; i++) {
      many.addFiles(complete("/b/f", f.getId(), 0, 100 + i));
    }
    Exception tooMany = failure(() -> m.completeFiles(many.build()));
    assertThat(tooMany).isInstanceOf(InvalidArgumentException.class);
    assertThat(tooMany.getMessage()).contains("not 1001");

    Exception ufsWritten = failure(() -> m.completeFiles(CompleteFilesRequest.newBuilder()
        .addFiles(complete("/b/f", f.getId(), 0, 9).toBuilder().setUfsWritten(true)).build()));
    assertThat(ufsWritten).isInstanceOf(InvalidArgumentException.class);
    assertThat(ufsWritten.getMessage()).contains("/b/f").contains("ufs_written");

    // A negative length fails its entry; none of the refused calls completed the file.
    FileResult negative = m.completeFiles(CompleteFilesRequest.newBuilder()
        .addFiles(complete("/b/f", f.getId(), -5, 10)).build()).getResults(0);
    assertThat(negative.getErrorCode()).isNotEmpty();
    assertThat(m.getStatus(GetStatusRequest.newBuilder().setPath("/b/f").build()).getFile().getComplete()).isFalse();
    m.ping(PingRequest.getDefaultInstance());
    assertCompleted(m.completeFiles(CompleteFilesRequest.newBuilder().addFiles(complete("/b/f", f.getId(), 0, 11))
        .build()).getResults(0), "/b/f", f.getId());
  }

  @Test
  void createFiles_answersEachEntryInOrder_durably_andARetryGetsTheSameFiles() throws Exception {
    FileSystemMasterServiceBlockingStub m = start();
    m.createDirectory(CreateDirectoryRequest.newBuilder().setPath("/n").build());
    m.createFile(create("/n/taken", id("maker", 1)));
    CreateFilesRequest req = CreateFilesRequest.newBuilder()
        .addFiles(create("/n/a", id("batch", 1)))
        .addFiles(create("/n/taken", id("batch", 2)))
        .addFiles(create("/n/b", id("batch", 3)).toBuilder().setBlockSize(-1))
        .addFiles(create("/n/no/such/dir/c", id("batch", 4)).toBuilder().setRecursive(false))
        .addFiles(create("/n/d", id("batch", 5)))
        .build();
    CreateFilesResponse first = m.createFiles(req);
    assertThat(first.getResultsCount()).isEqualTo(5);
    assertThat(first.getResults(0).getErrorCode()).isEmpty();
    assertThat(first.getResults(0).getFile().getPath()).isEqualTo("/n/a");
    assertThat(first.getResults(0).getFile().getComplete()).isFalse();
    assertThat(first.getResults(1).getErrorCode()).isEqualTo("ALREADY_EXISTS");
    assertThat(first.getResults(1).getErrorMessage()).contains("/n/taken");
    assertThat(first.getResults(2).getErrorCode()).isEqualTo("INVALID_ARGUMENT");
    assertThat(first.getResults(2).getErrorMessage()).contains("/n/b").contains("block size -1");
    assertThat(first.getResults(3).getErrorCode()).isEqualTo("NOT_FOUND");
    assertThat(first.getResults(4).getFile().getPath()).isEqualTo("/n/d");
    long a = first.getResults(0).getFile().getId();
    long d = first.getResults(4).getFile().getId();
    assertThat(a).isNotEqualTo(d);

    // Sent again with the same ids (an answer lost): the same files, not ALREADY_EXISTS.
    CreateFilesResponse again = m.createFiles(req);
    assertThat(again.getResults(0).getFile().getId()).isEqualTo(a);
    assertThat(again.getResults(4).getFile().getId()).isEqualTo(d);
    assertThat(again.getResults(1).getErrorCode()).isEqualTo("ALREADY_EXISTS");

    cluster.restartMaster();
    m = stub();
    assertThat(m.getStatus(GetStatusRequest.newBuilder().setPath("/n/a").build()).getFile().getId()).isEqualTo(a);
    assertThat(m.getStatus(GetStatusRequest.newBuilder().setPath("/n/d").build()).getFile().getId()).isEqualTo(d);
    // The refused entry created nothing: the path is free.
    FileResult redo = m.createFiles(CreateFilesRequest.newBuilder().addFiles(create("/n/b", null)).build())
        .getResults(0);
    assertThat(redo.getErrorCode()).as(redo.getErrorMessage()).isEmpty();
  }

  @Test
  void badCreateFilesCalls_areRefusedWhole_withAClearError() throws Exception {
    FileSystemMasterServiceBlockingStub m = start();
    Exception none = failure(() -> m.createFiles(CreateFilesRequest.getDefaultInstance()));
    assertThat(none).isInstanceOf(InvalidArgumentException.class);
    assertThat(none.getMessage()).contains("1 to 1000 files, not 0");
    CreateFilesRequest.Builder many = CreateFilesRequest.newBuilder();
    for (int i = 0; i <= 1000; i++) {
      many.addFiles(create("/many/f" + i, id("batch", i)));
    }
    Exception tooMany = failure(() -> m.createFiles(many.build()));
    assertThat(tooMany).isInstanceOf(InvalidArgumentException.class);
    assertThat(tooMany.getMessage()).contains("not 1001");
    Exception badType = failure(() -> m.createFiles(CreateFilesRequest.newBuilder()
        .addFiles(create("/x", id("batch", 2000))).addFiles(create("/y", null).toBuilder().setWriteType("SOMETIMES"))
        .build()));
    assertThat(badType).isInstanceOf(InvalidArgumentException.class);
    assertThat(badType.getMessage()).contains("SOMETIMES");
    // None of the refused calls created anything, and the master serves on.
    m.ping(PingRequest.getDefaultInstance());
    assertThat(failure(() -> m.getStatus(GetStatusRequest.newBuilder().setPath("/x").build())))
        .isInstanceOf(io.strata.common.exception.NotFoundException.class);
    assertThat(failure(() -> m.getStatus(GetStatusRequest.newBuilder().setPath("/many/f0").build())))
        .isInstanceOf(io.strata.common.exception.NotFoundException.class);
  }
}
