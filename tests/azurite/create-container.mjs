// Creates a container in Azurite, Azure Storage's emulator, with its well-known development
// account: node create-container.mjs <blob endpoint, e.g. http://127.0.0.1:10000> <container>.
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";

const [endpoint, container] = process.argv.slice(2);
if (!endpoint || !container) {
  console.error("usage: node create-container.mjs <blob endpoint> <container>");
  process.exit(2);
}
const account = "devstoreaccount1";
const key =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const service = new BlobServiceClient(
  `${endpoint}/${account}`,
  new StorageSharedKeyCredential(account, key),
);
await service.getContainerClient(container).createIfNotExists();
