# memgate, built in one stage and shipped in a small non-root image.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=docker
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/memgate ./cmd/memgate

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/memgate /usr/local/bin/memgate
EXPOSE 8080
USER nonroot
ENTRYPOINT ["/usr/local/bin/memgate"]
CMD ["serve"]
